"""The grader's cases, a module per stage; importing the package registers every exercise's probes."""

from course.grading.cases import s00, s01, s02, s03, s04, s05, s06  # noqa: F401
