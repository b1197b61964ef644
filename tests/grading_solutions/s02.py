    rebuilt = []
    for record in records:
        rebuilt = rebuilt[:record["from"]] + list(record["messages"])
    return rebuilt
