"""The paths other programs run or obey on their own (RUN_LATER), each with what runs it and its source: a
command sees them read-only, and a file tool's write there asks. A data table, not the rule: the rule for what
the file tools write unasked is course.sandbox.plain_data.
"""

from __future__ import annotations

import fnmatch
import functools
from typing import Callable

from course.sandbox.globs import any_glob


# ---------------------------------------------------------------- paths other programs run: written, they are code

# Workspace paths whose content another program runs, or obeys, without being asked: written by the model,
# they are code that runs later, as the user, outside every confinement (the user's next `git status`,
# which shell prompts and editors run on their own, runs a core.fsmonitor that .git/config names). A
# file the user runs on purpose (a test, a Makefile) is not one of them: running it is the user's
# own command; so is a conftest.py, which pytest loads only where it collects tests the user asked it to run
# (https://docs.pytest.org/en/stable/reference/fixtures.html#conftest-py-sharing-fixtures-across-multiple-files),
# and so are pytest.ini, a justfile, a noxfile.py and the build files (setup.py, a Makefile), which run only
# when the user runs pytest, just, nox or the build.
# A GNUmakefile or a makefile is not: GNU make reads it before the Makefile the user knows
# (https://www.gnu.org/software/make/manual/html_node/Makefile-Names.html), so a new one silently replaces
# what `make` does. A build.rs is the user's own command too: cargo runs it as part of the build asked for,
# as make runs a Makefile. rust-analyzer runs it as well when an editor opens the project (its
# cargo.buildScripts.enable is on by default, https://rust-analyzer.github.io/book/configuration), with the
# crate's procedural macros, as an editor's test explorer imports a conftest.py; no name would cover that,
# since Cargo.toml's `build` names any file as the build script and a procedural macro is any file of its
# crate: a project's own code is the user's to read, whatever runs it. Each name counts at any depth, and
# for everything beneath it when it is a folder; a name of several parts (.config/git), for those parts in a row.
# Codex CLI keeps .git, .agents and .codex read-only inside its writable roots, creating them included
# (github.com/openai/codex, codex-rs/protocol/src/permissions.rs: PROTECTED_METADATA_PATH_NAMES);
# Claude Code's sandbox refuses writes to .git, .vscode, .idea and the shell and git startup files
# (github.com/anthropic-experimental/sandbox-runtime, src/sandbox/sandbox-utils.ts: DANGEROUS_FILES,
# DANGEROUS_DIRECTORIES). The rest are named in each program's own documentation.
RUN_LATER = {
    ".git": "git runs what its metadata names (hooks, core.fsmonitor, a commondir's config) at the next git "
            "status, which shell prompts and editors run on their own",
    "HEAD": "git takes a folder holding HEAD, objects/ and refs/ for a repository of its own (a bare one), whose "
            "config (core.worktree, core.fsmonitor) the next git status there obeys",
    ".gitconfig": "git reads it as the user's own config when the workspace is a home folder",
    ".gitmodules": "git clones what it names on a recursive clone or a submodule update",
    ".hg": "Mercurial runs the hooks its .hg/hgrc names",
    ".jj": "Jujutsu reads its repository config from it",
    ".vscode": "VS Code runs its tasks (runOn: folderOpen) and the programs its settings name",
    ".idea": "JetBrains IDEs run the run configurations and startup tasks it holds",
    ".devcontainer": "editors build and start the container it describes when the folder is opened",
    ".envrc": "direnv runs it on entering the folder",
    ".tool-versions": "asdf and mise pick the program a command name runs from it (a path: version runs any folder)",
    ".mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    "mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".pre-commit-config.yaml": "pre-commit's git hook runs the commands it lists at the next commit",
    ".husky": "husky's git hooks run the scripts in it at the next commit",
    ".claude": "Claude Code runs the hooks and servers its settings name",
    ".mcp.json": "agents start the servers it names",
    ".codex": "Codex CLI reads its config and rules from it",
    ".agents": "agents load skills and rules from it",
    ".bashrc": "bash runs it at every start", ".bash_profile": "bash runs it at every login",
    ".bash_login": "bash runs it at every login", ".profile": "sh runs it at every login",
    ".zshrc": "zsh runs it at every start", ".zshenv": "zsh runs it at every start",
    ".zprofile": "zsh runs it at every login", ".zlogin": "zsh runs it at every login",
    ".ripgreprc": "ripgrep reads options from it, and --pre runs a program",
    ".dir-locals.el": "Emacs evaluates what it sets on opening a file beneath it",
    ".exrc": "vi runs it on start in the folder (exrc)", ".nvim.lua": "Neovim runs it on start in the folder (exrc)",
    "*.pth": "Python's site module runs its import lines at every start of Python, in a site-packages",
    "sitecustomize.py": "Python imports it at every start, from a site-packages",
    "usercustomize.py": "Python imports it at every start, from the user's site-packages",
    "pyvenv.cfg": "its 'home' names the interpreter every start of that virtual environment runs",
    # git's per-user config under $XDG_CONFIG_HOME (https://git-scm.com/docs/git-config#FILES)
    ".config/git": "git reads its config and attributes as the user's own when the workspace is a home folder",
    ".lfsconfig": "git-lfs takes the server it sends files to from it (https://github.com/git-lfs/git-lfs/blob/main/docs/man/git-lfs-config.adoc)",
    ".hgrc": "Mercurial runs the hooks it names when the workspace is a home folder",
    ".pdbrc": "pdb runs its lines as Python on every start in the folder (https://docs.python.org/3/library/pdb.html)",
    "GNUmakefile": "GNU make reads it before the Makefile, so `make` runs it instead",
    "makefile": "GNU make reads it before the Makefile, so `make` runs it instead",
    ".vimrc": "Vim runs it on start in the folder (exrc)", ".nvimrc": "Neovim runs it on start in the folder (exrc)",
    ".dir-locals-2.el": "Emacs evaluates what it sets on opening a file beneath it",
    ".devcontainer.json": "editors build and start the container it describes when the folder is opened "
                          "(https://containers.dev/implementors/spec/)",
    ".mise": "mise reads its config from it on entering the folder",
    "mise.*.toml": "mise runs the hooks and sets the environment it names on entering the folder "
                   "(https://mise.jdx.dev/configuration.html)",
    ".mise.*.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    "mise/config.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".config/mise": "mise runs the hooks and sets the environment it names on entering the folder",
    ".config/mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".cursor": "Cursor runs the hooks and servers its settings name", ".gemini": "Gemini CLI runs the hooks and servers its settings name",
    ".config/fish": "fish runs config.fish and conf.d at every start",
    ".bash_logout": "bash runs it when a login shell ends",
    ".config/systemd": "systemd starts the user units in it (https://www.freedesktop.org/software/systemd/man/latest/systemd.unit.html)",
    ".config/autostart": "the desktop starts what it names at every login (XDG autostart)",
    ".Rprofile": "R runs it at every start in the folder (https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html)",
    ".cargo/config.toml": "cargo runs the programs it names (build.rustc-wrapper) at every build "
                          "(https://doc.rust-lang.org/cargo/reference/config.html)",
    ".cargo/config": "cargo reads it as .cargo/config.toml",
    # Python's installed packages: a project's virtual environment in the workspace. pytest loads every
    # [pytest11] entry point of an installed distribution's entry_points.txt at its start
    # (https://docs.pytest.org/en/stable/how-to/writing_plugins.html#setuptools-entry-points), and site
    # runs the .pth files there; an egg-link or egg-info puts a folder on sys.path.
    "site-packages": "Python imports what is in it, runs its .pth files, and pytest loads the plugins it names",
    "dist-packages": "Python imports what is in it, runs its .pth files, and pytest loads the plugins it names",
    "*.dist-info": "pytest loads the plugins its entry_points.txt names, and pip runs what it installs",
    "*.egg-info": "pytest loads the plugins its entry_points.txt names once it is on sys.path",
    "*.egg-link": "Python puts the folder it names on sys.path (an editable install)",
    # Shells, editors, debuggers and REPLs that run a file of the home folder or the current one at start.
    ".bash_aliases": "bash runs it at every start (Debian's and Ubuntu's .bashrc source it)",
    ".zlogout": "zsh runs it when a login shell ends",
    ".xprofile": "the display manager runs it at every graphical login",
    ".config/environment.d": "systemd sets the environment it names for every user service "
                             "(https://www.freedesktop.org/software/systemd/man/latest/environment.d.html)",
    ".vim": "Vim runs the plugins in it at every start", ".gvimrc": "gVim runs it on start (exrc)",
    ".config/nvim": "Neovim runs its init.lua and plugins at every start",
    ".emacs": "Emacs evaluates it at every start", ".emacs.d": "Emacs evaluates its init.el at every start",
    ".tmux.conf": "tmux runs the commands it holds (run-shell) at every start",
    ".gdbinit": "gdb runs its commands at every start (https://sourceware.org/gdb/current/onlinedocs/gdb.html/Startup.html)",
    ".irbrc": "irb runs it as Ruby at every start", ".pryrc": "pry runs it as Ruby at every start",
    ".octaverc": "Octave runs it at every start in the folder",
    ".ipython": "IPython runs the files in profile_default/startup at every start",
    ".jupyter": "Jupyter runs its jupyter_*_config.py files as Python at every start",
    # Package managers: the config names a program or a hook that the next install runs, or the index it
    # installs from (pip's, conda's), which is code the user then runs.
    ".yarnrc": "yarn runs the program its yarn-path names, instead of itself (https://classic.yarnpkg.com/en/docs/yarnrc)",
    ".yarnrc.yml": "yarn runs the program its yarnPath names, instead of itself (https://yarnpkg.com/configuration/yarnrc)",
    "bunfig.toml": "bun runs the preload scripts it names before every run and test (https://bun.sh/docs/runtime/bunfig)",
    ".pnpmfile.cjs": "pnpm runs its hooks at every install (https://pnpm.io/pnpmfile)",
    "pip.conf": "pip installs from the index it names (https://pip.pypa.io/en/stable/topics/configuration/)",
    ".config/pip": "pip installs from the index its pip.conf names", ".pip": "pip installs from the index its pip.conf names",
    ".condarc": "conda installs from the channels it names (https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/)",
    ".config/hg": "Mercurial runs the hooks its hgrc names",
    # Gradle's own cache lives in a project's .gradle/, which a build writes: only the files it runs are kept.
    ".gradle/init.d": "Gradle runs the scripts in it before every build (https://docs.gradle.org/current/userguide/init_scripts.html)",
    ".gradle/init.gradle": "Gradle runs it before every build", ".gradle/init.gradle.kts": "Gradle runs it before every build",
    ".gradle/gradle.properties": "Gradle starts its JVM with the options it names (org.gradle.jvmargs: a -javaagent)",
    # Other agents and editors, which run the hooks, commands and servers their project config names.
    ".zed": "Zed runs the tasks and language servers its settings name",
    ".roo": "Roo Code loads its rules and starts the servers its mcp.json names",
    ".kiro": "Kiro runs its agent hooks and starts the servers its settings name",
    "opencode.json": "opencode starts the servers and runs the commands it names (https://opencode.ai/docs/config/)",
    ".aider.conf.yml": "aider runs the lint-cmd and test-cmd it names after its edits (https://aider.chat/docs/config/aider_conf.html)",
    ".github/workflows": "GitHub Actions runs them with the repository's secrets at the next push",
    # pyenv's shims run the interpreter it names; a name with '..' in it ran one outside pyenv's versions
    # (CVE-2022-35861, https://nvd.nist.gov/vuln/detail/CVE-2022-35861).
    ".python-version": "pyenv and uv pick the interpreter `python` runs from it",
    ".vault": "Vault runs the program its token_helper names at every login "
              "(https://developer.hashicorp.com/vault/docs/commands/token-helper)",
    # node resolves require() and import by looking in node_modules of the folder and of every folder above
    # (https://nodejs.org/api/modules.html#loading-from-node_modules-folders); npm runs its packages' scripts.
    "node_modules": "node loads a package from it for every require() and import beneath its folder, and npm "
                    "runs its packages' install scripts and bin links",
    # Linters' and type checkers' configs, which editors run on every open and save: settings that are code.
    # pylint reads pylintrc, pylintrc.toml, .pylintrc, .pylintrc.toml in the folder it runs in
    # (https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options), and runs
    # the Python of their init-hook (https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook).
    **dict.fromkeys(("pylintrc", ".pylintrc", "pylintrc.toml", ".pylintrc.toml"),
                    "pylint runs the Python its init-hook holds at every run, which editors start on every save"),
    # ESLint runs its config as JavaScript: eslint.config.* since v9, .eslintrc.js and .eslintrc.cjs before
    # (https://eslint.org/docs/latest/use/configure/configuration-files).
    **dict.fromkeys(("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
                     "eslint.config.mts", "eslint.config.cts", ".eslintrc.js", ".eslintrc.cjs"),
                    "ESLint runs it as JavaScript at every run, which editors start on every open and save"),
    # mypy imports the plugins its config names, by module or by path
    # (https://mypy.readthedocs.io/en/stable/extending_mypy.html#configuring-mypy-to-use-plugins).
    **dict.fromkeys(("mypy.ini", ".mypy.ini"),
                    "mypy imports the plugins it names (plugins = x.py) at every run, which editors start on every save"),
    # lefthook's git hooks run the commands of lefthook.yml, merged with lefthook-local.yml, and the scripts
    # of .lefthook/ and .lefthook-local/, in any of its formats (https://lefthook.dev/configuration/).
    **dict.fromkeys((*(f"{dot}lefthook{local}.{ending}" for dot in ("", ".") for local in ("", "-local")
                       for ending in ("[jy]*", "toml")), ".lefthook", ".lefthook-local"),
                    "lefthook's git hooks run the commands it names at the next commit, merge or checkout"),
    "uv.toml": "uv installs from the index it names, and runs the build backends of what it installs "
               "(https://docs.astral.sh/uv/concepts/configuration-files/)",
    ".pdm-python": "pdm runs the interpreter whose path it holds for every command "
                   "(https://pdm-project.org/en/latest/usage/project/)",
    ".rvmrc": "RVM runs it as shell on entering the folder once trusted, and the home folder's at every start "
              "(https://rvm.io/workflow/projects)",
    # readline (bash, Python's REPL, psql...) reads it at every start; a key it binds to a macro types the
    # macro's text, a command and its Enter included, when the key is pressed
    # (https://tiswww.case.edu/php/chet/readline/readline.html#Readline-Init-File-Syntax).
    ".inputrc": "readline binds keys to what it names at every start: a key bound to a macro types a command "
                "and runs it",
    # The other shells' and X's startup files, read when the workspace is a home folder (man tcsh,
    # Startup and shutdown; man ksh and man mksh, ENV; man xinit; man Xsession).
    ".cshrc": "csh and tcsh run it at every start", ".tcshrc": "tcsh runs it at every start",
    ".login": "csh and tcsh run it at every login", ".logout": "csh and tcsh run it when a login shell ends",
    ".kshrc": "ksh runs it at every interactive start", ".mkshrc": "mksh runs it at every interactive start",
    ".xinitrc": "startx runs it to start the session", ".xsession": "the display manager runs it as the session",
    ".xsessionrc": "the X session runs it at every graphical login",
    # The same settings in the project's shared configs: pylint takes [tool.pylint.*] of pyproject.toml and
    # [pylint.*] of setup.cfg and tox.ini (https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options),
    # mypy [tool.mypy] and [mypy] (https://mypy.readthedocs.io/en/stable/config_file.html), flake8 the paths
    # of its [flake8:local-plugins] (https://flake8.pycqa.org/en/latest/user/configuration.html#using-local-plugins).
    # Asked about whole rather than judged by what they hold: each tool reads them its own way (TOML tables, INI
    # sections, keys in any case, continuation lines), another key of another tool loads code, and a command's
    # write would need the same judgement after it; an edit of them is rare enough to put to a person.
    **dict.fromkeys(("pyproject.toml", "setup.cfg", "tox.ini"),
                    "pylint runs its init-hook and load-plugins, mypy its plugins, flake8 its local plugins, "
                    "from it at every run, which editors start on every open and save"),
    # Agents' project folders, whole: each loads code or starts servers from them.
    ".opencode": "opencode loads the plugins in it at every start (https://opencode.ai/docs/plugins/)",
    "opencode.jsonc": "opencode starts the servers and runs the commands it names (https://opencode.ai/docs/config/)",
    ".qwen": "Qwen Code starts the servers its settings.json names "
             "(https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/)",
    ".amazonq": "Amazon Q starts the servers its mcp.json and default.json name "
                "(https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/mcp-ide.html)",
    ".continue": "Continue starts the servers and loads the config it holds (https://docs.continue.dev/customize/deep-dives/mcp)",
    ".windsurf": "Windsurf runs the shell commands its hooks.json names at each step of its agent "
                 "(https://docs.windsurf.com/windsurf/cascade/hooks)",
    # rustup runs the toolchain a path in it names for every cargo and rustc beneath its folder
    # (https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file), which rust-analyzer runs on opening.
    **dict.fromkeys(("rust-toolchain.toml", "rust-toolchain"),
                    "rustup runs the programs of the toolchain it names (path) for every cargo and rustc"),
    # Configs that are JavaScript, or name JavaScript plugins, which editor extensions load on opening and saving:
    # Tailwind's (https://v3.tailwindcss.com/docs/configuration), Prettier's (https://prettier.io/docs/configuration,
    # plugins: https://prettier.io/docs/plugins).
    "tailwind.config.*": "the Tailwind editor extension runs it as JavaScript on opening the folder",
    **dict.fromkeys(("prettier.config.*", ".prettierrc*"),
                    "Prettier runs it as JavaScript, or loads the plugins it names, at every format, which editors run on save"),
    ".perldb": "perl -d runs it as Perl from the folder it starts in (https://perldoc.perl.org/perldebug#Debugger-Customization)",
    ".psqlrc": "psql runs its commands (\\! runs a shell command) at every start "
               "(https://www.postgresql.org/docs/current/app-psql.html#APP-PSQL-FILES)",
    ".screenrc": "screen runs its commands (exec) at every start (man screen)",
    ".bashrc.d": "bash runs the files in it at every start (Fedora's .bashrc sources them)",
    # A home folder's ~/.local/bin comes first on PATH (Debian's and Fedora's .profile put it there,
    # https://www.freedesktop.org/software/systemd/man/latest/file-hierarchy.html): a `git` written there runs for `git`.
    ".local/bin": "the shell runs a program in it for its name, before the system's (it comes first on PATH)",
    # Other CI services' configs, which run as .github/workflows do, with the project's secrets, at the next push.
    ".gitlab-ci.yml": "GitLab CI runs its jobs with the project's CI/CD variables at the next push (https://docs.gitlab.com/ci/yaml/)",
    ".circleci": "CircleCI runs the jobs of its config.yml with the project's secrets at the next push "
                 "(https://circleci.com/docs/configuration-reference/)",
    **dict.fromkeys(("azure-pipelines.yml", "azure-pipelines.yaml"),
                    "Azure Pipelines runs its steps with the pipeline's secrets at the next push "
                    "(https://learn.microsoft.com/en-us/azure/devops/pipelines/yaml-schema/)"),
    "bitbucket-pipelines.yml": "Bitbucket Pipelines runs its scripts with the repository's variables at the next push "
                               "(https://support.atlassian.com/bitbucket-cloud/docs/bitbucket-pipelines-configuration-reference/)",
    "Jenkinsfile": "Jenkins runs its pipeline with the job's credentials at the next push "
                   "(https://www.jenkins.io/doc/book/pipeline/jenkinsfile/)",
    ".travis.yml": "Travis CI runs its scripts with the repository's secrets at the next push "
                   "(https://docs.travis-ci.com/user/customizing-the-build/)",
    ".buildkite": "Buildkite runs the steps of its pipeline.yml with the pipeline's secrets at the next push "
                  "(https://buildkite.com/docs/pipelines/configure/defining-steps)",
    ".drone.yml": "Drone runs its steps with the repository's secrets at the next push (https://docs.drone.io/pipeline/overview/)",
    **dict.fromkeys((".woodpecker.yml", ".woodpecker.yaml", ".woodpecker"),
                    "Woodpecker runs its steps with the repository's secrets at the next push "
                    "(https://woodpecker-ci.org/docs/usage/workflow-syntax)"),
    ".forgejo/workflows": "Forgejo Actions runs them with the repository's secrets at the next push "
                          "(https://forgejo.org/docs/latest/user/actions/)",
    ".gitea/workflows": "Gitea Actions runs them with the repository's secrets at the next push "
                        "(https://docs.gitea.com/usage/actions/overview)",
    # And the other hosted CI services' configs, run the same way: Google Cloud Build's
    # (https://cloud.google.com/build/docs/build-config-file-schema), Cirrus CI's (https://cirrus-ci.org/guide/writing-tasks/),
    # AppVeyor's (https://www.appveyor.com/docs/appveyor-yml/), AWS CodeBuild's buildspec
    # (https://docs.aws.amazon.com/codebuild/latest/userguide/build-spec-ref.html), Semaphore's (https://docs.semaphoreci.com/).
    **dict.fromkeys(("cloudbuild.yaml", "cloudbuild.yml", ".cirrus.yml", ".cirrus.star", "appveyor.yml", ".appveyor.yml",
                     "buildspec.yml", ".semaphore"),
                    "a CI service runs its steps with the project's secrets at the next push"),
    # Where the programs above read the same files under XDG's folders (or their own), when the workspace is a home folder.
    ".config/tmux": "tmux runs the commands of its tmux.conf (run-shell) at every start (man tmux, CONFIGURATION FILES)",
    ".config/gdb": "gdb runs the commands of its gdbinit at every start "
                   "(https://sourceware.org/gdb/current/onlinedocs/gdb.html/Initialization-Files.html)",
    ".config/vim": "Vim runs its vimrc and the plugins in it at every start (https://vimhelp.org/starting.txt.html#xdg-vimrc)",
    ".config/emacs": "Emacs evaluates its init.el and early-init.el at every start "
                     "(https://www.gnu.org/software/emacs/manual/html_node/emacs/Find-Init.html)",
    # Neovim's data folder is on its runtimepath (site/) and holds the plugins managers install (lazy/)
    # (https://neovim.io/doc/user/starting.html#standard-path).
    ".local/share/nvim": "Neovim runs the plugins in it at every start",
    # bash-completion sources ~/.bash_completion, $XDG_CONFIG_HOME/bash_completion and the completions of its user
    # folder (https://github.com/scop/bash-completion#faq); .bash_completion.d is the folder such a file sources.
    **dict.fromkeys((".bash_completion", ".bash_completion.d", ".config/bash_completion", ".local/share/bash-completion"),
                    "bash-completion runs it in every interactive bash"),
    ".julia/config": "Julia runs its startup.jl at every start (https://docs.julialang.org/en/v1/manual/command-line-interface/#Startup-file)",
    ".config/nushell": "Nushell runs its config.nu and env.nu at every start (https://www.nushell.sh/book/configuration.html)",
    # PowerShell on Linux: profiles in ~/.config/powershell, modules (loaded on a command's first use) in
    # ~/.local/share/powershell/Modules (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_profiles)
    **dict.fromkeys((".config/powershell", ".local/share/powershell"),
                    "PowerShell runs the profiles and loads the modules in it at every start"),
    **dict.fromkeys((".xonshrc", ".config/xonsh"),
                    "xonsh runs it at every start (https://xon.sh/xonshrc.html)"),
    # sqlite3 runs its dot-commands (.shell, .system run a program) at every start; $XDG_CONFIG_HOME/sqlite3/sqliterc
    # since 3.41 (https://sqlite.org/cli.html).
    **dict.fromkeys((".sqliterc", ".config/sqlite3"), "sqlite3 runs its dot-commands (.shell runs a program) at every start"),
    # irb reads $XDG_CONFIG_HOME/irb/irbrc, and irb.rc and _irbrc in the current folder (https://ruby.github.io/irb/Configurations_md.html)
    **dict.fromkeys((".config/irb", "_irbrc", "irb.rc"), "irb runs it as Ruby at every start"),
    ".config/pry": "pry runs its pryrc as Ruby at every start (https://github.com/pry/pry/wiki/Pry-rc)",
    ".config/mypy": "mypy imports the plugins its config names at every run (https://mypy.readthedocs.io/en/stable/config_file.html)",
    # conda's user configs besides ~/.condarc (https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html#searching-for-condarc)
    **dict.fromkeys((".config/conda", ".conda/condarc"), "conda installs from the channels it names"),
    # direnv runs its direnvrc before every .envrc (https://direnv.net/man/direnv.1.html#files)
    **dict.fromkeys((".config/direnv", ".direnvrc"), "direnv runs it before every .envrc, on entering any folder that has one"),
    ".bunfig.toml": "bun runs the preload scripts it names before every run and test (https://bun.sh/docs/runtime/bunfig)",
    ".config/opencode": "opencode loads the plugins and starts the servers it names at every start (https://opencode.ai/docs/plugins/)",
    ".config/zed": "Zed runs the tasks and language servers its settings name (https://zed.dev/docs/configuring-zed)",
    # Claude Code starts the MCP servers of ~/.claude.json's local and user scopes (https://code.claude.com/docs/en/mcp).
    ".claude.json": "Claude Code starts the servers it names, in every project or in the one it lists them under",
    # R reads .Renviron (whose R_PROFILE_USER names the R file it runs) and .Rprofile in the folder it starts in
    # (https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html).
    ".Renviron": "R sets the environment it names at every start in the folder (R_PROFILE_USER: the code R runs)",
    # What a git hook runs at the next commit: lint-staged's and commitlint's configs, as JavaScript in their
    # .js, .cjs, .mjs forms (https://github.com/lint-staged/lint-staged#configuration,
    # https://commitlint.js.org/reference/configuration.html).
    **dict.fromkeys((".lintstagedrc*", "lint-staged.config.*"),
                    "lint-staged runs the commands it names, and runs it as JavaScript, at the next commit"),
    **dict.fromkeys(("commitlint.config.*", ".commitlintrc*"),
                    "commitlint runs it as JavaScript at the next commit, from its git hook"),
    # What editor extensions load on opening and saving, as ESLint's and Prettier's are: Stylelint's
    # (https://stylelint.io/user-guide/configure/, run by its VS Code extension), the Svelte language server's, which
    # loads svelte.config.js for its preprocessors (https://github.com/sveltejs/language-tools/issues/1683).
    **dict.fromkeys(("stylelint.config.*", ".stylelintrc.js", ".stylelintrc.cjs", ".stylelintrc.mjs"),
                    "Stylelint runs it as JavaScript at every run, which editors start on every open and save"),
    "svelte.config.*": "the Svelte editor extension runs it as JavaScript on opening the folder",
    # Helix starts the language servers a workspace's .helix/languages.toml names (https://docs.helix-editor.com/languages.html).
    ".helix": "Helix starts the language servers its languages.toml names on opening a file beneath it",
    # A VS Code workspace file holds settings and tasks, run on opening it as .vscode's are
    # (https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces).
    "*.code-workspace": "VS Code runs its tasks (runOn: folderOpen) and the programs its settings name on opening it",
    ".config/starship.toml": "starship runs its custom modules' commands at every prompt (https://starship.rs/config/#custom-commands)",
    ".config/kitty": "kitty runs the session its kitty.conf names (startup_session: launch a program) at every start "
                     "(https://sw.kovidgoyal.net/kitty/launch/)",
    # Options every curl and wget reads first: where to write what they fetch, what to send (curl's --config and -q,
    # https://curl.se/docs/manpage.html#-K; https://www.gnu.org/software/wget/manual/html_node/Wgetrc-Commands.html).
    ".curlrc": "curl takes options from it at every run: a file it writes or sends, a header it adds",
    ".wgetrc": "wget takes commands from it at every run: where it writes what it fetches",
    # Python's bytecode: `import x` loads __pycache__/x.cpython-3XX.pyc in place of x.py, and a hash-based pyc
    # written UNCHECKED_HASH is never compared with its source (https://docs.python.org/3/library/py_compile.html,
    # PycInvalidationMode; https://peps.python.org/pep-0552/); a NAME.pyc with no NAME.py beside it is imported too.
    "__pycache__": "Python imports the bytecode in it in place of the source beside it (an unchecked hash-based .pyc "
                   "whatever the source says)",
    "*.pyc": "Python imports a .pyc in place of its source, or as the module itself when no source is beside it",
    # When the workspace is a home folder: VS Code's user settings and tasks (~/.config/Code/User,
    # https://www.mintlify.com/Microsoft/vscode/customization/settings), where git.path names the program it runs as
    # git (https://github.com/microsoft/vscode/issues/477); KDE Plasma's pre-startup and logout scripts
    # (https://docs.kde.org/stable5/en/plasma-workspace/kcontrol/autostart/index.html).
    ".config/Code/User": "VS Code runs the programs its user settings name (git.path) and the user tasks in it",
    # VSCodium, VS Code built without Microsoft's branding, keeps the same user data under its own name
    # (https://github.com/VSCodium/vscodium/pull/691).
    ".config/VSCodium/User": "VSCodium runs the programs its user settings name (git.path) and the user tasks in it",
    # Tiling window managers run the exec lines of their config at every start (man 5 sway: the config is a list
    # of commands sway runs on startup; i3's, https://github.com/i3/i3/discussions/4635).
    **dict.fromkeys((".config/i3", ".i3", ".config/sway"),
                    "the window manager runs the programs its config names (exec) at every start"),
    # Which program opens a file of a type when it is double-clicked: mimeapps.list names a desktop entry, whose
    # Exec line is what runs (https://specifications.freedesktop.org/mime-apps/latest-single,
    # https://specifications.freedesktop.org/mime-apps/latest/default).
    **dict.fromkeys((".config/mimeapps.list", ".config/*-mimeapps.list", ".local/share/applications"),
                    "the desktop runs the Exec of the entry it names when a file of that type is opened"),
    ".config/plasma-workspace": "KDE Plasma runs the scripts of its env/ at every login and of its shutdown/ at logout",
    # Matplotlib reads matplotlibrc in the current folder first, then ~/.config/matplotlib/matplotlibrc
    # (https://packtpub.com/en-gr/product/mastering-matplotlib-2x-9781789617696/chapter/heavy-customization-1/section/the-matplotlib-configuration-files-ch01lvl1sec05),
    # and a backend of the form module://name is a module it imports (https://matplotlib.org/3.3.4/api/matplotlib_configuration_api.html).
    **dict.fromkeys(("matplotlibrc", ".config/matplotlib"),
                    "Matplotlib imports the module its backend names (module://NAME) in every script that plots"),
    # flake8's own config file, read like setup.cfg's and tox.ini's sections above: [flake8:local-plugins] imports the
    # modules it names, from the paths it puts on sys.path, at every run
    # (https://flake8.pycqa.org/en/stable/user/configuration.html#using-local-plugins).
    ".flake8": "flake8 imports the local plugins it names at every run, which editors start on every save",
    # Other version-control systems' stores, each holding what runs at the user's next command there. darcs takes
    # default options from _darcs/prefs/defaults (~/.darcs/defaults for the user), posthook and prehook among them,
    # which it runs as shell commands (http://darcs.net/Using/Configuration;
    # https://hackage.haskell.org/package/darcs-2.18.5/docs/src/Darcs.UI.RunHook.html). Pijul runs the programs of
    # .pijul/hooks (https://docs.rs/crate/pijul/0.12.1/source/src/commands/hooks.rs) and keeps there the approval that
    # lets pijul.toml's shared hooks run (https://docs.rs/crate/pijul/1.0.0-beta.22/source/src/commands/hooks.rs).
    # Sapling reads .sl/config as the repository's config, whose [hooks] run as Mercurial's do
    # (github.com/facebook/sapling, eden/scm/tests/test-histedit-fold.t). Bazaar loads every plugin of
    # ~/.bazaar/plugins at start, and hooks are installed by plugins
    # (https://docs.huihoo.com/bazaar/2.5/bzr-ja-html/user-guide/hooks.html).
    **dict.fromkeys(("_darcs", ".darcs"), "darcs runs the posthook and prehook its defaults name at the next darcs command"),
    ".pijul": "Pijul runs its hooks at the next record, and keeps the approval that lets the shared hooks run",
    ".sl": "Sapling runs the hooks its .sl/config names at the next sl command they are set for",
    ".bazaar/plugins": "Bazaar loads the plugins in it, and the hooks they install, at every bzr command",
    # wakatime-cli, which every WakaTime editor plugin runs on every save, runs the command its api_key_vault_cmd names
    # (https://github.com/wakatime/wakatime-cli/blob/develop/USAGE.md); it is a secret too (its api_key).
    ".wakatime.cfg": "wakatime-cli runs the command its api_key_vault_cmd names, at every save an editor's plugin reports",
    # Other agents' project configs, which they run on their own when they open the project, as Claude Code runs
    # .claude's hooks. OpenHands runs .openhands/setup.sh every time it begins working with the repository and the
    # commands of .openhands/hooks.json at its events (https://docs.openhands.dev/openhands/usage/customization/repository.md).
    # Kilo Code loads the servers of .kilocode/mcp.json by itself, and its newer releases those of kilo.json,
    # kilo.jsonc and .kilo/ (https://kilo.ai/docs/automate/mcp/using-in-kilo-code, and its source,
    # github.com/Kilo-Org/kilocode, packages/kilo-docs/pages/automate/mcp/using-in-kilo-code.md). Crush reads
    # .crush.json, then crush.json, then ~/.config/crush/crush.json, whose lsp and mcp entries are programs it starts
    # (github.com/charmbracelet/crush, README.md, Configuration). Copilot's agents load every .github/hooks/*.json
    # and run its commands at session start, before each tool and after
    # (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference).
    # AGENTS.md and CLAUDE.md are left out: they are instructions a later agent reads, words rather than code that
    # runs, and a project's own documentation the user writes with the agent.
    ".openhands": "OpenHands runs its setup.sh at the start of every session and the commands its hooks.json names",
    **dict.fromkeys((".kilocode", ".kilo", "kilo.json", "kilo.jsonc"), "Kilo Code starts the servers its config names"),
    **dict.fromkeys((".crush.json", "crush.json", ".config/crush"),
                    "Crush starts the language servers and MCP servers it names"),
    ".github/hooks": "Copilot's agents run the commands of its hooks at every session start and around each tool",
    # REPLs that evaluate a file of the folder they start in: GHCi's .ghci
    # (https://downloads.haskell.org/ghc/latest/docs/users_guide/ghci.html#the-ghci-and-haskeline-files), IEx's .iex.exs
    # (https://hexdocs.pm/iex/IEx.html#module-the-iex-exs-file), OCaml's .ocamlinit (https://ocaml.org/manual/toplevel.html),
    # LLDB's .lldbinit (https://lldb.llvm.org/man/lldb.html#configuration-files); Cline's hooks, run around each of its
    # tools (https://docs.cline.bot/customization/hooks).
    ".ghci": "GHCi runs it at every start in the folder", ".iex.exs": "IEx evaluates it at every start in the folder",
    ".ocamlinit": "the OCaml toplevel runs it at every start in the folder", ".lldbinit": "LLDB runs its commands at every start",
    ".clinerules/hooks": "Cline runs the hooks in it around each of its tools",
    # When the workspace is a home folder: what a shell's startup file sources (oh-my-zsh's custom/*.zsh, bash-it's
    # custom/, rustup's .cargo/env, nvm's nvm.sh, fzf's and powerlevel10k's files), terminals' and window managers'
    # configs that name the programs they start (wezterm, alacritty, ghostty; openbox, Hyprland, bspwm, awesome),
    # mail delivery's (a .forward or .procmailrc line that pipes mail to a program: man 5 forward, man procmailrc),
    # mailcap's viewers (RFC 1524), and VS Code's remote server's machine settings.
    **dict.fromkeys((".oh-my-zsh", ".bash_it", ".cargo/env", ".nvm", ".fzf.bash", ".fzf.zsh", ".p10k.zsh"),
                    "the shell's startup file sources it at every start"),
    **dict.fromkeys((".wezterm.lua", ".config/wezterm", ".config/alacritty", ".config/ghostty"),
                    "the terminal runs the program its config names at every start"),
    **dict.fromkeys((".config/openbox", ".config/hypr", ".config/bspwm", ".config/awesome"),
                    "the window manager runs the programs its config names at every start"),
    **dict.fromkeys((".forward", ".procmailrc"), "mail delivery runs the program it pipes mail to"),
    ".mailcap": "mail and file viewers run the program it names for a type of file",
    ".vscode-server": "VS Code's remote server runs the programs its machine settings name",
    # More of what a home folder's shell startup sources, each as its installer writes the line that sources it:
    # SDKMAN (https://sdkman.io/install), zsh's completion dump (man zshcompsys, compinit), powerlevel10k's instant
    # prompt (https://github.com/romkatv/powerlevel10k#instant-prompt), prezto and zim (https://github.com/sorin-ionescu/prezto,
    # https://zimfw.sh/docs/), asdf (https://asdf-vm.com/guide/getting-started.html), ghcup, opam, elan, deno and nix's
    # profile scripts; and programs that come first on PATH from a home folder: pyenv's shims
    # (https://github.com/pyenv/pyenv#understanding-shims), cargo's, bun's, volta's and go's bin folders.
    **dict.fromkeys((".sdkman", ".zcompdump*", ".cache/p10k-instant-prompt-*", ".zprezto", ".zpreztorc", ".zimrc",
                     ".zshrc.local", ".asdf", ".ghcup/env", ".opam/opam-init", ".elan/env", ".deno/env", ".nix-profile",
                     ".pythonrc", ".pythonrc.py", ".python-startup.py", ".envrc.local", ".vimrc.local", ".tmux"),
                    "the shell's or an editor's startup file sources it at every start"),
    **dict.fromkeys((".pyenv", ".cargo/bin", ".bun/bin", ".volta/bin", "go/bin"),
                    "the shell runs a program in it for its name (it comes first on PATH)"),
    # More window managers', launchers' and file managers' configs that run programs at start or on a key
    # (their man pages), a browser's and a REPL's config that is Python (https://qutebrowser.org/doc/help/configuring.html,
    # https://github.com/prompt-toolkit/ptpython#configuration), sshd's per-user rc, run at every login (man sshd,
    # SSHRC), pam_env's environment (man pam_env.conf), Jupyter's kernel specs, whose argv is the program it starts
    # (https://jupyter-client.readthedocs.io/en/latest/kernels.html#kernel-specs), nix's post-build-hook
    # (https://nix.dev/manual/nix/latest/command-ref/conf-file.html), podman's hooks and runtime (man containers.conf),
    # a hooks folder a project points core.hooksPath at (https://git-scm.com/docs/githooks), Theia's folder-open
    # tasks, and VS Code's saved workspaces.
    **dict.fromkeys((".config/autostart-scripts", ".config/niri", ".config/river", ".config/labwc", ".config/qtile",
                     ".config/herbstluftwm", ".xmonad", ".fluxbox", ".config/sxhkd", ".xbindkeysrc", ".config/yazi",
                     ".config/ranger", ".config/lf", ".config/kak", ".config/lazygit", ".config/zellij", ".config/jj",
                     ".config/helix", ".config/qutebrowser", ".config/ptpython"),
                    "it runs the programs its config names at start or on a key"),
    ".ssh/rc": "sshd runs it at every login", ".pam_environment": "PAM sets the environment it names at every login",
    ".local/share/jupyter/kernels": "Jupyter starts the program a kernel spec's argv names",
    ".config/nix": "nix runs the post-build-hook its nix.conf names after every build",
    ".config/containers": "podman runs the hooks and the runtime its containers.conf names",
    ".githooks": "git runs the hooks in it at the next commit, where core.hooksPath names it",
    ".theia": "Theia runs its tasks (runOn: folderOpen) on opening the folder",
    ".config/Code/Workspaces": "VS Code runs the tasks of a saved workspace on opening it",
    # Cloud editors run a project's setup on opening it: Gitpod the init, before and command of .gitpod.yml's tasks,
    # in an image its .gitpod.Dockerfile may build (https://www.gitpod.io/docs/introduction/learn-gitpod/gitpod-yaml);
    # Firebase Studio (once Project IDX) the onCreate and onStart commands of .idx/dev.nix
    # (https://firebase.google.com/docs/studio/customize-workspace); Replit the run, onBoot and packages of .replit
    # and replit.nix (https://docs.replit.com/core-concepts/project-editor/app-setup/configuration); CodeSandbox the setup tasks of
    # .codesandbox/tasks.json (https://codesandbox.io/docs/learn/devboxes/task).
    **dict.fromkeys((".gitpod.yml", ".gitpod.Dockerfile"), "Gitpod runs the commands of its tasks when a workspace opens"),
    ".idx": "Firebase Studio runs the onCreate and onStart commands of its dev.nix when the workspace opens",
    **dict.fromkeys((".replit", "replit.nix"), "Replit runs the commands it names (onBoot, run) when the project opens"),
    ".codesandbox": "CodeSandbox runs the setup tasks of its tasks.json when the project opens",
    # RuboCop loads the Ruby files its require: and plugins: name, and follows inherit_from to other .rubocop files,
    # at every run, which editors start on every save (https://docs.rubocop.org/rubocop/plugins.html).
    **dict.fromkeys((".rubocop.yml", ".rubocop_*.yml", ".rubocop-*.yml"),
                    "RuboCop loads the Ruby its require: and plugins: name at every run, which editors start on every save"),
}
_RUN_LATER_DEPTH = max(name.count("/") + 1 for name in RUN_LATER)  # the most parts one name has


def run_later(relative: str, *, last_only: bool = False) -> str:
    """The name of RUN_LATER that covers a path relative to the workspace (the path itself or a folder
    it lies in, compared without case: on a case-insensitive disk .GIT is .git), or "". A name of
    several parts (.config/git) fits consecutive parts. ``last_only``: only a name that ends at the
    path's last part, for a walk that judged the folders above it on the way down."""
    parts = relative.lower().split("/")
    if last_only and not _run_later_one_part()(parts[-1]) and not any(
            len(pieces) > 1 and fnmatch.fnmatchcase(parts[-1], pieces[-1]) for _, pieces in _run_later_parts()):
        return ""  # one expression for every name, asked of each entry of a walk: the usual answer, fast
    for name, pieces in _run_later_parts():
        ends = [len(parts)] if last_only else range(len(pieces), len(parts) + 1)
        for end in ends:
            window = parts[end - len(pieces):end] if end >= len(pieces) else []
            if window and all(fnmatch.fnmatchcase(part, piece) for part, piece in zip(window, pieces)):
                return name
    return ""


@functools.lru_cache(maxsize=1)
def _run_later_one_part() -> Callable[[str], bool]:
    return any_glob(tuple(pieces[0] for _, pieces in _run_later_parts() if len(pieces) == 1))


@functools.lru_cache(maxsize=1)
def _run_later_parts() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((name, tuple(name.lower().split("/"))) for name in RUN_LATER)
