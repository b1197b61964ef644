    missing = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant" or isinstance(message["content"], str):
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = set()
        if following and following["role"] == "user" and isinstance(following["content"], list):
            answered = {block.get("tool_use_id") for block in following["content"] if block.get("type") == "tool_result"}
        missing += [block["id"] for block in message["content"]
                    if block.get("type") == "tool_use" and block["id"] not in answered]
    return missing
