"""What a stage needs that its chapter does not teach, each behind one call (calculator, calls written
as text, an echo, limits, old turns as text, a refusal's details). It imports course.runtime only.
"""
