"""The trace viewer: a recorded run as a page, and the page text (markdown, the page's language) it
shares with the site. It imports course.runtime, course.helpers and course.offline only.
"""
