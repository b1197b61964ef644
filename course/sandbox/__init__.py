"""s06's sandbox: one path resolver, the shell-grammar reader (in a child process), the kernel's
confinement of a command, the approval shown to a person, what is redacted. It imports course.runtime only.
"""
