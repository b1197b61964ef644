"""Running a stage: the client factory (the real API, a local server or the offline model) and the
command line every stage shares. It imports the runtime, the helpers, the offline model and the viewer.
"""
