"""The runtime every stage's process holds: model ids, prices, the trace printer, the run log and the
transcript, the workspace, the wire format. It imports nothing of the course outside itself.
"""
