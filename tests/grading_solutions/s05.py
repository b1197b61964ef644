    def blocks(message):
        return message["content"] if isinstance(message["content"], list) else []
    broken = []
    for index, message in enumerate(messages):
        after = messages[index + 1] if index + 1 < len(messages) else {"role": "", "content": []}
        before = messages[index - 1] if index > 0 else {"role": "", "content": []}
        if message["role"] == "assistant":
            answered = {b.get("tool_use_id") for b in blocks(after) if b.get("type") == "tool_result"} if after["role"] == "user" else set()
            broken += [b["id"] for b in blocks(message) if b.get("type") == "tool_use" and b["id"] not in answered]
        elif message["role"] == "user":
            made = {b.get("id") for b in blocks(before) if b.get("type") == "tool_use"} if before["role"] == "assistant" else set()
            broken += [b["tool_use_id"] for b in blocks(message) if b.get("type") == "tool_result" and b["tool_use_id"] not in made]
    return list(dict.fromkeys(broken))
