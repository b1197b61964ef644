"""The lab: the ladder of scenarios by stages, benchmarks, statistics, the doctor. It imports the packages
above and the sandbox, never grading or the site.
"""
