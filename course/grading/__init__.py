"""Grading: exercises, their texts, the probes that run a copy, the jail they run in, the command line
and the scorecard. It imports the runtime, the offline model, the sandbox and the lab; never the site.
"""
