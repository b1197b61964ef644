    for period in range(2, len(calls) // max(rounds, 1) + 1):
        tail = calls[len(calls) - period * rounds:]
        cycle = tail[:period]
        if len(set(cycle)) > 1 and all(tail[i] == cycle[i % period] for i in range(len(tail))):
            return True
    return False
