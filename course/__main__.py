"""The course's command line, for everything that is not one stage: ``python -m course COMMAND``.

    run STAGE "TASK" [--model ID] [--workspace DIR] [--json] [stage options]   a stage on a task
    run STAGE --resume RUN [stage options]                                      a stopped run, continued (s02 on)
    run STAGE --scenario NAME [--json]                                          a stage on a ladder scenario, traced
    ladder [--json | --markdown]                                                every scenario against every stage
    stats [--json] [--log PATH]                                                 the runs log, summed up
    models                                                                      the offline model ids
    exercise STAGE DEST [--force]                                               a student copy of a stage
    check STAGE DEST [-v] [--seed N] [--json PATH] [grading options]            grade a student copy, confined
    grade PATH... [--out DIR] [--summary FILE] [grading options]                grade a class into a gradebook
    bench tokens [--turns N] [--json] [--plot PATH]                            the bill of a long task, by stage
    bench calls [--calls N] [--json]                                           one offline call's time, median
    bench grading [--copies N] [--jobs N] [--json]                             a class of N copies of every stage, timed
    doctor [--model ID] [--json]                                               what a model does with the course's requests
    view RUN [--out PATH] [--open]                                             one run, as a page to step through

Each command is one ``add_*`` function (its arguments) and one ``do_*`` function (its work),
listed in COMMANDS. A problem the user can fix is one line on stderr, never a traceback; output
cut short (``| head``) ends the command quietly. A run's fresh workspace is removed when the run is
over, unless ``--keep-workspace`` (course/running/cli.py says when a run keeps it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time

from course.lab import ladder, scenarios, stats
from course.running.cli import REMOVED, closed_pipe, flush_quietly
from course.runtime.commands import course_command
from course.runtime.models import CourseError
from course.offline import MODELS
from course.runtime.trace import TracePrinter
from course.runtime.workspace import keep, prepare_workspace


# ---------------------------------------------------------------- run

def add_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stage", help="the stage to run, e.g. s01")
    parser.add_argument("task", nargs="?", help="what the agent should do (leave out with --scenario)")
    parser.add_argument("--scenario", help="run a ladder scenario instead of a task (the run is logged like any other): " + ", ".join(
        scenario.name for scenario in scenarios.SCENARIOS))
    parser.add_argument("--model", help="model id (default: $MODEL_ID, else offline without an API key)")
    parser.add_argument("--workspace", help="folder to work in (default: a fresh copy of the sample workspace)")
    parser.add_argument("--keep-workspace", action="store_true",
                        help="keep the fresh copy when the run is over (it is removed otherwise)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line summarising the run")


def do_run(args, stage_options: list[str]) -> int:
    """A task goes to the stage's own command line; a scenario is set up here and judged like a ladder cell."""
    if args.scenario:
        return run_scenario(args, stage_options)
    resuming = any(option == "--resume" or option.startswith("--resume=") for option in stage_options)
    if not args.task and not resuming:
        raise CourseError(f"say what {args.stage} should do: {course_command()} run {args.stage} \"TASK\" "
                          "(or --scenario NAME)")
    argv = ([args.task] if args.task else []) + stage_options
    argv += ["--model", args.model] if args.model else []
    argv += ["--workspace", args.workspace] if args.workspace else []
    argv += ["--keep-workspace"] if args.keep_workspace else []
    argv += ["--json"] if args.json else []
    return ladder.load_stage(args.stage).main(argv)


def kept(workspace):
    keep(workspace)  # --keep-workspace: the learner's now, never removed by a later run
    return workspace


def run_scenario(args, stage_options: list[str]) -> int:
    if args.task or args.model or args.workspace or stage_options:
        raise CourseError("a scenario sets its own task, model, workspace and options; "
                          f"run it as: {course_command()} run {args.stage} --scenario {args.scenario}")
    scenario = scenarios.scenario_named(args.scenario)
    print(f"scenario {scenario.name}: {scenario.task!r} on {scenario.model}"
          + (f" ({scenario.shows})" if scenario.shows else ""))
    # The scenario resumes its run itself: when the cell is judged, the run is over for good.
    with contextlib.ExitStack() as removed_after:
        workspace = kept(prepare_workspace()) if args.keep_workspace else removed_after.enter_context(ladder.scratch_workspace())
        cell = ladder.run_cell(args.stage, scenario, workspace, trace=TracePrinter(), log_runs=True)
    if cell.error:
        print(f"\nthe stage raised {cell.error}")
    else:
        print(f"\nanswer:\n{cell.answer or '(no text)'}")
    print(f"outcome: {ladder.cell_text(cell.row())} · {cell.input_tokens} input tokens")
    print(f"workspace: {cell.workspace}" if args.keep_workspace
          else f"workspace: {REMOVED}")
    if args.json:
        print(json.dumps(cell.row(), ensure_ascii=False))
    return 0 if cell.outcome == "completed" else 1


# ---------------------------------------------------------------- ladder, stats, models

def add_ladder(parser: argparse.ArgumentParser) -> None:
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the cells as a JSON list instead of a table")
    shown.add_argument("--markdown", action="store_true",
                       help="print the table in Markdown, whole cells spelled out (as the docs show it)")


def do_ladder(args, _) -> int:
    started = time.perf_counter()
    rows = ladder.run_ladder()
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    print(ladder.markdown(rows) if args.markdown else ladder.text_table(rows))
    violations = ladder.rule_violations(rows)
    print(f"\n{len(rows)} runs in {time.perf_counter() - started:.1f} s.\n" + (
        "The ladder holds: every stage fixes a failure of the one before it and breaks nothing."
        if not violations else "The ladder's rule is broken:"))
    for violation in violations:
        print(f"  - {violation}")
    return 1 if violations else 0


def add_stats(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    parser.add_argument("--log", help="the runs log to read (default: $AGENT_COURSE_RUNS_LOG, else runs/runs.jsonl)")


def do_stats(args, _) -> int:
    print(stats.report(args.log, as_json=args.json))
    return 0


def do_models(args, _) -> int:
    width = max(len(model.id) for model in MODELS) + 2
    for model in MODELS:
        print(f"{model.id:{width}}{model.description}")
    print("\nIn a family's id, N is a whole number above 0: offline-long-20, offline-flood-40.")
    return 0


# ---------------------------------------------------------------- exercises (course/grading/exercises.py)

def add_exercise(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stage", help="the stage to copy, e.g. s01")
    parser.add_argument("dest", help="the folder to write the student copy to")
    parser.add_argument("--force", action="store_true", help="write into DEST even if it is not empty")


def do_exercise(args, _) -> int:
    from course.grading import exercises  # imported on use: the other commands do not need it
    exercises.make_student_copy(args.stage, args.dest, force=args.force)
    return 0


def add_check(parser: argparse.ArgumentParser) -> None:
    from course.grading import cli as grading_cli  # check and grade are course/grading/cli.py's
    grading_cli.add_check(parser)


def do_check(args, _) -> int:
    from course.grading import cli as grading_cli
    return grading_cli.do_check(args, _)


def add_grade(parser: argparse.ArgumentParser) -> None:
    from course.grading import cli as grading_cli
    grading_cli.add_grade(parser)


def do_grade(args, _) -> int:
    from course.grading import cli as grading_cli
    return grading_cli.do_grade(args, _)


# ---------------------------------------------------------------- benchmarks (course/lab/bench.py)

def add_bench(parser: argparse.ArgumentParser) -> None:
    benchmarks = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    speed = benchmarks.add_parser("calls", help="how long one offline model call takes through the SDK")
    speed.add_argument("--calls", type=int, default=200, help="how many calls to time (default 200)")
    speed.add_argument("--json", action="store_true", help="print the result as JSON")
    tokens = benchmarks.add_parser("tokens", help="the input billed per turn, with and without pruning")
    tokens.add_argument("--turns", type=int, help="turns of the long task (default: the benchmark's own)")
    tokens.add_argument("--json", action="store_true", help="print the measurements as one JSON object")
    tokens.add_argument("--plot", help="where to write the SVG plot (default: the benchmark's own)")
    from course.grading import cli as grading_cli
    grading_cli.add_bench_grading(benchmarks)


def do_bench(args, _) -> int:
    from course.lab import bench  # imported on use, like the exercises
    if args.benchmark == "calls":
        return bench.calls_command(args.calls, as_json=args.json)
    if args.benchmark == "grading":
        from course.grading import cli as grading_cli
        return grading_cli.do_bench_grading(args)
    turns = {"turns": args.turns} if args.turns is not None else {}
    return bench.tokens_command(**turns, as_json=args.json, plot=args.plot)


# ---------------------------------------------------------------- doctor (course/lab/doctor.py)

def add_doctor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model id (default: $MODEL_ID, else offline without an API key)")
    parser.add_argument("--json", action="store_true", help="print the checks as one JSON object")
    parser.add_argument("--api", choices=("anthropic", "openai", "ollama"), default="anthropic",
                        help="the server's format: openai reads $OPENAI_BASE_URL and $OPENAI_API_KEY, "
                             "ollama $OLLAMA_HOST (default: anthropic, through the course's client)")
    parser.add_argument("--base-url", help="the server of --api openai or ollama (default: from its variables)")


def do_doctor(args, _) -> int:
    """Exit 0 when every check passes, 1 when one fails; a model that does not answer is an error (2)."""
    from course.lab import doctor
    if args.api == "anthropic":
        diagnosis = doctor.diagnose(args.model)
    else:
        import os

        from course.serve.wire_client import WireClient
        if args.api == "openai":
            base = args.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
            client = WireClient("openai", base, os.environ.get("OPENAI_API_KEY"))
        else:
            host = args.base_url or os.environ.get("OLLAMA_HOST") or "127.0.0.1:11434"
            client = WireClient("ollama", host if "://" in host else "http://" + host)
        if not args.model:
            raise CourseError(f"--api {args.api}: name the server's model with --model")
        diagnosis = doctor.diagnose(args.model, client=client, where=f"the {args.api} server at {client.base_url}")
    print(json.dumps(doctor.as_json(diagnosis), ensure_ascii=False) if args.json else doctor.table(diagnosis))
    return 0 if diagnosis.healthy else 1


# ---------------------------------------------------------------- view (course/viewer/pages.py)

def add_view(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="a run id, a transcript's path, or 'last' (the newest run)")
    parser.add_argument("--out", help="where to write the page (default: runs/views/RUN.html)")
    parser.add_argument("--open", action="store_true", help="open the page in the system's browser")


def do_view(args, _) -> int:
    from course.viewer import pages as viewer
    return viewer.view_command(args.run, args.out, open_it=args.open)


# ---------------------------------------------------------------- translations (course/site/translations.py)

def add_translations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", metavar="PAGE", nargs="+",
                        help="record in each Japanese page (docs/NAME.ja.md) the English text it now translates")


def do_translations(args, _) -> int:
    """Exit 0 when every Japanese page is in step with its English page, 1 (each difference a line) if not."""
    from pathlib import Path

    from course.site import translations
    for page in args.record or ():
        translations.record(Path(page).resolve())
    found = translations.every_problem()
    print("\n".join(found) if found else "every Japanese page is in step with its English page")
    return 1 if found else 0


# ---------------------------------------------------------------- serve (course/serve/)

def add_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8765, help="the port to listen on (0: any free port; default 8765)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1, this machine only)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow an address other machines can reach: anyone who reaches it gets answers")


def do_serve(args, _) -> int:
    """Exit 0 when stopped by Ctrl-C or SIGTERM; an address it may not or cannot bind is an error (2)."""
    from course.serve.server import serve_command
    try:
        return serve_command(args.port, args.host, args.allow_remote)
    except (ValueError, OSError) as error:
        print(f"course serve: {error}", file=sys.stderr)
        return 2


def no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


# name: (help, add its arguments, do it).
COMMANDS = {
    "run": ("run a stage on a task, or on a ladder scenario", add_run, do_run),
    "ladder": ("run every scenario against every stage and print the matrix", add_ladder, do_ladder),
    "stats": ("turns, stop reasons and tool errors over the runs log", add_stats, do_stats),
    "models": ("list the offline model ids", no_arguments, do_models),
    "exercise": ("write a student copy of a stage with its exercises stubbed out", add_exercise, do_exercise),
    "check": ("grade a student copy: each exercise alone, confined, on cases drawn per run", add_check, do_check),
    "grade": ("grade a class of copies into a gradebook (CSV and JSON), in parallel", add_grade, do_grade),
    "bench": ("measure what a long task costs, stage by stage", add_bench, do_bench),
    "doctor": ("check what a model does with the course's requests, before relying on it", add_doctor, do_doctor),
    "serve": ("answer as the offline model over HTTP: Anthropic, OpenAI and Ollama formats", add_serve, do_serve),
    "view": ("write one recorded run as a page that steps through it, turn by turn", add_view, do_view),
    "translations": ("check that each Japanese page says what its English page says", add_translations,
                     do_translations),
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=course_command(), description="The course's command line.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, do) in COMMANDS.items():
        command = commands.add_parser(name, help=help_text, description=help_text)
        add_arguments(command)
        command.set_defaults(do=do)
    return top


def main(argv=None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # what is still buffered is written now, while a closed pipe can be caught
        return code
    except BrokenPipeError:  # the reader went away (`| head`): end as such a program does, in silence
        return closed_pipe()
    except SystemExit:  # --help, or a bad option: argparse has printed its text; write it out now
        flush_quietly()
        raise


def _main(argv) -> int:
    top = parser()
    args, unknown = top.parse_known_args(argv)
    if unknown and args.command != "run":  # only `run` passes options on, to the stage's own command line
        top.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return args.do(args, unknown)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
