    value = arguments
    if isinstance(arguments, str):
        text = arguments.strip()
        fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
        try:
            value = json.loads(fenced.group(1) if fenced else text)
        except ValueError:
            value = arguments
    if isinstance(value, dict):
        return value
    raise ValueError(f"the arguments must be a JSON object, got {type(value).__name__}")
