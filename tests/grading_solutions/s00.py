    results = []
    for block in content:
        if block.get("type") != "tool_use":
            continue
        try:
            output, is_error = run(block["name"], block["input"])
        except Exception as error:
            output, is_error = f"{type(error).__name__}: {error}", True
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output, "is_error": is_error})
    return results
