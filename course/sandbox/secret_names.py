"""The usual names of secret files, as a data table with the sources that document each, and the one matcher
that finds them in a path: each name is compared with the path's parts (a name of several parts, with as many
parts in a row), so that deciding costs the same whatever the path's depth.

What the table misses is what the content rules are for: a private key under any name (course.sandbox.paths,
holds_private_key) and a token in any output (course.sandbox.redaction).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Callable

from course.sandbox.globs import GLOB_CHARACTERS, any_glob


# ---------------------------------------------------------------- secret files

# The usual names of secret files: s06's default rules deny them to every tool, at any depth (a folder of
# that name with everything beneath it). Claude Code's settings page denies Read(./.env), Read(./.env.*) and
# Read(./secrets/**) in its example (https://code.claude.com/docs/en/settings); the rest are where tools keep
# credentials, as each documents.
SECRETS = (
    ".env", ".env.*",                                       # dotenv, and .env.local, .env.production...
    "*.pem", "*.key", "*.p12", "*.pfx", "secrets",          # private keys, certificate stores
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".ssh",   # OpenSSH's keys (man ssh-keygen)
    ".aws",              # https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html
    ".azure", ".config/gcloud", ".kube",  # the Azure, Google Cloud and Kubernetes command lines' logins
    ".docker",           # config.json: registry logins (https://docs.docker.com/reference/cli/docker/login/)
    ".npmrc",            # registry tokens (https://docs.npmjs.com/cli/v10/configuring-npm/npmrc)
    ".pypirc",           # PyPI tokens (https://packaging.python.org/en/latest/specifications/pypirc/)
    ".netrc",            # logins for curl, git and ftp (man 5 netrc)
    ".git-credentials",  # git's credential store (https://git-scm.com/docs/git-credential-store)
    ".gnupg",            # GnuPG's private keys
    ".env~", "#.env#", ".envrc",  # an editor's backup of .env; direnv's file, which holds exported tokens
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "deploy_key", "deploy_key.*",  # a key under a suffix: id_rsa.old
    ".config/gh",        # hosts.yml: GitHub CLI's token (https://cli.github.com/manual/gh_auth_login)
    ".pgpass",           # PostgreSQL passwords (https://www.postgresql.org/docs/current/libpq-pgpass.html)
    ".cargo/credentials.toml", ".cargo/credentials",  # https://doc.rust-lang.org/cargo/reference/config.html#credentials
    ".streamlit/secrets.toml",  # https://docs.streamlit.io/develop/concepts/connections/secrets-management
    "credentials.json",  # Google's OAuth client secrets and service account keys, as their guides name them
    ".terraform.d",      # credentials.tfrc.json: Terraform's API tokens (https://developer.hashicorp.com/terraform/cli/config/config-file)
    ".yarnrc.yml",       # npmAuthToken (https://yarnpkg.com/configuration/yarnrc)
    ".env-*", ".env_*",  # dotenv spelled with a dash or an underscore: .env-local, .env_prod
    # A repository's own config: actions/checkout keeps the job's token in it as an extraheader, and a remote
    # URL may hold one (https://github.com/actions/checkout#usage, persist-credentials). git itself reads it.
    ".git/config", ".git/modules/*/config",
    ".terraformrc", "terraform.rc",  # credentials blocks (https://developer.hashicorp.com/terraform/cli/config/config-file)
    "*.tfstate", "*.tfstate.backup",  # plain-text secrets (https://developer.hashicorp.com/terraform/language/state/sensitive-data)
    ".vault-token",      # Vault's token helper (https://developer.hashicorp.com/vault/docs/commands/token-helper)
    ".s3cfg",            # s3cmd's keys (https://s3tools.org/usage)
    ".boto",             # boto's and gsutil's keys (https://cloud.google.com/storage/docs/boto-gsutil)
    ".gem/credentials",  # RubyGems' API key (https://guides.rubygems.org/command-reference/#gem-signin)
    ".databrickscfg",    # Databricks' tokens (https://docs.databricks.com/aws/en/dev-tools/auth/config-profiles)
    ".config/rclone",    # rclone.conf: every remote's keys (https://rclone.org/docs/#config-config-file)
    ".m2/settings.xml", ".m2/settings-security.xml",  # Maven's server passwords (https://maven.apache.org/settings.html#servers)
    ".config/hub",       # hub's oauth_token (https://hub.github.com/hub.1.html, CONFIGURATION)
    ".kaggle",           # kaggle.json: the API key (https://github.com/Kaggle/kaggle-api#api-credentials)
    # Hugging Face's token (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hftokenpath)
    ".cache/huggingface/token", ".huggingface/token",
    "auth.json",         # Composer's tokens (https://getcomposer.org/doc/articles/authentication-for-private-packages.md)
    # Secrets files by their common names: Home Assistant's and ESPHome's secrets.yaml
    # (https://www.home-assistant.io/docs/configuration/secrets/), and the same in YAML's other ending and JSON.
    "secrets.yaml", "secrets.yml", "secrets.json",
    ".my.cnf",           # MySQL's client password (https://dev.mysql.com/doc/refman/8.0/en/option-files.html)
    ".dockercfg",        # Docker's older registry logins (https://docs.docker.com/reference/cli/docker/login/)
    "client_secret*.json",  # Google's OAuth client as it is downloaded (https://developers.google.com/identity/protocols/oauth2)
    "*.tfvars",          # Terraform's variables, often passwords (https://developer.hashicorp.com/terraform/language/values/variables)
    ".gradle/gradle.properties",  # repository passwords (https://docs.gradle.org/current/userguide/build_environment.html)
    ".git/config.worktree",  # a worktree's config holds what .git/config may (https://git-scm.com/docs/git-worktree)
    ".config/doctl",     # DigitalOcean's token in config.yaml (https://docs.digitalocean.com/reference/doctl/)
    ".config/ngrok", ".ngrok2",  # ngrok's authtoken (https://ngrok.com/docs/agent/config/)
    ".oci",              # Oracle Cloud's API key and config (https://docs.oracle.com/en-us/iaas/Content/API/Concepts/sdkconfig.htm)
    ".sentryclirc",      # sentry-cli's auth token (https://docs.sentry.io/cli/configuration/)
    # Shells' and REPLs' histories: a token typed on a command line (export TOKEN=..., mysql -pSECRET) stays in them.
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
    ".node_repl_history", ".sqlite_history", ".irb_history", ".rediscli_history",  # node, sqlite3, irb, redis-cli
    "*.ppk",             # PuTTY's private keys (https://the.earth.li/~sgtatham/putty/0.81/htmldoc/Chapter8.html)
    "AuthKey_*.p8",      # Apple's API keys as downloaded (https://developer.apple.com/documentation/appstoreconnectapi/creating-api-keys-for-app-store-connect-api)
    "token.json",        # the OAuth token Google's quickstarts save (https://developers.google.com/workspace/drive/api/quickstart/python)
    # Firebase's and Google Cloud's service account keys as their guides name them
    # (https://firebase.google.com/docs/admin/setup#initialize_the_sdk_in_non-google_environments)
    "serviceAccountKey.json", "*-service-account*.json", "service-account*.json",
    "wg*.conf",          # WireGuard's private keys (man wg-quick: /etc/wireguard/wg0.conf)
    "*.ovpn",            # OpenVPN's profiles, keys inline (https://openvpn.net/community-resources/reference-manual-for-openvpn-2-6/)
    ".htpasswd",         # Apache's password hashes (https://httpd.apache.org/docs/current/programs/htpasswd.html)
    "*.keystore", "*.jks",  # Java's and Android's signing keys (https://developer.android.com/studio/publish/app-signing)
    ".password-store",   # pass, the password manager (https://www.passwordstore.org/)
    ".local/share/keyrings",  # GNOME Keyring's stores (https://wiki.gnome.org/Projects/GnomeKeyring)
    # Docker Compose's env_file, dotenv by another ending: deploy/prod.env
    # (https://docs.docker.com/compose/how-tos/environment-variables/set-environment-variables/#use-the-env_file-attribute)
    "*.env",
    "_netrc",            # .netrc as curl and git name it on Windows (https://everything.curl.dev/usingcurl/netrc.html)
    ".dev.vars", ".dev.vars.*",  # Wrangler's local secrets (https://developers.cloudflare.com/workers/configuration/secrets/#local-development-with-secrets)
    "local.settings.json",  # Azure Functions' connection strings (https://learn.microsoft.com/en-us/azure/azure-functions/functions-develop-local#local-settings-file)
    # A kubeconfig outside .kube, as KUBECONFIG names one (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/)
    "kubeconfig", "*.kubeconfig",
    # A site's or a project's own secrets by the names their frameworks give them: WordPress's database password and
    # salts (https://developer.wordpress.org/advanced-administration/wordpress/wp-config/), cookiecutter-django's
    # per-environment dotenv files under .envs/ (https://cookiecutter-django.readthedocs.io/en/latest/2-local-development/developing-locally-docker.html),
    # Google Cloud's application default credentials wherever GOOGLE_APPLICATION_CREDENTIALS points
    # (https://cloud.google.com/docs/authentication/application-default-credentials).
    "wp-config.php", ".envs", "application_default_credentials.json",
    # Older tools' and mail clients' saved passwords, as each documents: Subversion's credential cache
    # (https://svnbook.red-bean.com/en/1.7/svn.serverconfig.netmodel.html#svn.serverconfig.netmodel.credcache), CVS's
    # (https://www.gnu.org/software/trans-coord/manual/cvs/html_node/Password-authentication-client.html), a CIFS
    # mount's credentials file (man mount.cifs), fetchmail's and msmtp's (man fetchmail, https://marlam.de/msmtp/msmtp.html),
    # Pidgin's accounts (https://developer.pidgin.im/wiki/PlainTextPasswords); a browser's cookies exported for curl
    # or yt-dlp (https://curl.se/docs/http-cookies.html); the token Google's older quickstarts pickle.
    ".subversion/auth", ".cvspass", ".smbcredentials", ".fetchmailrc", ".msmtprc", ".config/msmtp",
    ".purple/accounts.xml", "cookies.txt", "token.pickle",
    # Configs that hold a password where a project puts one: pip's index URL with a user and a token
    # (https://pip.pypa.io/en/stable/topics/authentication/), Mercurial's [auth] section
    # (https://www.mercurial-scm.org/doc/hgrc.5.html#auth), git's own config, whose URLs and credential sections
    # may (hidden from a command only when it holds one: plain_git_config()).
    "pip.conf", "pip.ini", ".hgrc", ".config/hg/hgrc", ".gitconfig", ".config/git/config",
    # More command lines' and desktop tools' logins, each where its tool documents it: CircleCI's CLI token
    # (https://circleci-public.github.io/circleci-cli/), FileZilla's saved sites (https://wiki.filezilla-project.org/Config_Files),
    # cloudflared's tunnel credentials (https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/),
    # acme.sh's DNS API keys (https://github.com/acmesh-official/acme.sh/wiki/dnsapi), Twilio's CLI profiles
    # (https://www.twilio.com/docs/twilio-cli/general-usage/profiles), DVC's local remote credentials
    # (https://dvc.org/doc/command-reference/config), a VNC password (man vncpasswd), Helm's registry logins
    # (https://helm.sh/docs/helm/helm_registry_login/), Rails' master key (https://guides.rubyonrails.org/security.html#custom-credentials).
    ".circleci/cli.yml", ".config/filezilla", ".cloudflared", ".acme.sh", ".config/twilio-cli", ".dvc/config.local",
    ".vnc/passwd", ".config/helm/registry", "config/master.key", "config/credentials/*.key",
    # The same secrets by the other names their tools take: .authinfo, netrc's format for Emacs and git's netrc
    # helper (https://www.gnu.org/software/emacs/manual/html_mono/auth.html), git's http.cookieFile
    # (https://git-scm.com/docs/git-config#Documentation/git-config.txt-httpcookieFile), Terraform's variables as JSON
    # (https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files),
    # rclone's and ngrok's configs wherever --config puts them, unixODBC's and mbsync's passwords (man odbc.ini,
    # man mbsync), cqlsh's (https://cassandra.apache.org/doc/latest/cassandra/managing/tools/cqlsh.html).
    ".authinfo", ".gitcookies", "*.tfvars.json", "rclone.conf", "ngrok.yml", ".odbc.ini", ".mbsyncrc", ".cassandra/cqlshrc",
    # AWS's shared credentials file wherever AWS_SHARED_CREDENTIALS_FILE puts it, and the same format other
    # tools keep under that name (https://docs.aws.amazon.com/sdkref/latest/guide/file-location.html)
    "credentials",
    ".config/sops/age",  # age's keys for SOPS, keys.txt (https://github.com/getsops/sops#encrypting-using-age)
    ".config/solana/id.json",  # Solana's default keypair (https://docs.solanalabs.com/cli/wallets/file-system)
    # Agents' own logins: Claude Code's OAuth token on Linux (~/.claude/.credentials.json, mode 600:
    # https://github.com/rsnodgrass/claude-code-auth),
    # Gemini CLI's cached OAuth token (https://github.com/google-gemini/gemini-cli/pull/1122), Copilot's
    # oauth_token in apps.json and hosts.json (https://github.com/CopilotC-Nvim/CopilotChat.nvim/issues/326).
    ".claude/.credentials.json", ".gemini/oauth_creds.json", ".config/github-copilot",
    # Claude Code's ~/.claude.json: the account, and the servers `claude mcp add --env KEY=...` wrote with their keys
    # (https://code.claude.com/docs/en/mcp, local and user scopes).
    ".claude.json",
    ".config/hcloud/cli.toml",  # Hetzner Cloud's tokens (https://github.com/hetznercloud/cli/blob/main/docs/reference/manual/hcloud_config.md)
    ".config/glab-cli/config.yml",  # GitLab CLI's token (https://manpages.debian.org/unstable/glab/glab-config-set.1.en.html)
    ".mc/config.json",   # MinIO client's access and secret keys (https://min.io/docs/minio/linux/reference/minio-mc/mc-alias-set.html)
    ".dbt/profiles.yml",  # dbt's warehouse passwords (https://docs.getdbt.com/docs/configure-your-profile)
    # sbt's and Ivy's repository passwords (https://www.scala-sbt.org/1.x/docs/Publishing.html#Credentials)
    ".sbt/.credentials", ".ivy2/.credentials",
    ".bundle/config",    # Bundler's gem source logins, BUNDLE_<HOST> (https://bundler.io/man/bundle-config.1.html)
    ".passwd-s3fs",      # s3fs's keys (https://manpages.ubuntu.com/manpages/jammy/man1/s3fs.1.html, AUTHENTICATION)
    ".snowflake/connections.toml",  # Snowflake's passwords (https://docs.snowflake.com/en/developer-guide/snowflake-cli/connecting/configure-connections)
    ".local/share/atuin/key",  # atuin's sync encryption key (https://docs.atuin.sh/configuration/config/#key_path)
    ".aliyun/config.json",  # Alibaba Cloud's AccessKey secrets (https://www.alibabacloud.com/help/en/cli/configure-credentials)
    ".config/scw/config.yaml",  # Scaleway's secret_key (https://www.scaleway.com/en/developers/cli/config)
    # NuGet's user config, with a feed's ClearTextPassword (https://learn.microsoft.com/en-us/nuget/reference/cli-reference/cli-ref-sources)
    ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config",
    # Netlify CLI's token, and the older netlifyctl's (https://github.com/netlify/netlify-credential-helper/pull/32)
    ".netlify/config.json", ".config/netlify",
    # Wrangler's OAuth token, at its legacy and XDG places (https://github.com/cloudflare/workers-sdk/issues/526)
    ".wrangler/config/default.toml", ".config/.wrangler/config",
    # firebase-tools' login (https://github.com/firebase/firebase-tools/issues/181)
    ".config/configstore/firebase-tools.json",
    # Firefox's saved logins, the key that decrypts them, and its cookies, in each profile under ~/.mozilla/firefox
    # (https://support.mozilla.org/en-US/kb/profiles-where-firefox-stores-user-data)
    ".mozilla/firefox/*/logins.json", ".mozilla/firefox/*/key4.db", ".mozilla/firefox/*/cookies.sqlite",
    # Chrome's and Chromium's saved logins and cookies, in each profile (Default, Profile 1...) of their user data
    # folder (https://chromium.googlesource.com/chromium/src/+/main/docs/user_data_dir.md; the files' names and Cookies'
    # move to Network/: https://github.com/moonD4rk/HackBrowserData/blob/main/rfcs/002-chromium-data-storage.md).
    *(f".config/{browser}/*/{name}" for browser in ("google-chrome", "chromium")
      for name in ("Login Data", "Cookies", "Network/Cookies")),
    # Brave's, the same files under its own user data folder, .config/BraveSoftware/Brave-Browser (and -Beta, -Dev,
    # -Nightly: https://github.com/brave/brave-browser/issues/80).
    *(f".config/BraveSoftware/Brave-Browser*/*/{name}" for name in ("Login Data", "Cookies", "Network/Cookies")),
    # Thunderbird's profiles hold the same logins.json, key4.db and cookies.sqlite as Firefox's
    # (https://support.gen.uk/kb/faq.php?id=383: ~/.thunderbird/PROFILE, saved passwords;
    # http://kb.mozillazine.org/Files_and_folders_in_the_profile_-_Thunderbird: key4.db).
    ".thunderbird/*/logins.json", ".thunderbird/*/key4.db", ".thunderbird/*/cookies.sqlite",
    # Slack's desktop app keeps the session cookie its token needs in its Cookies database
    # (https://github.com/rneatherway/gh-slack/issues/15: ~/.config/Slack/Cookies; Network/Cookies in newer Electron:
    # https://github.com/trustedsec/CS-Remote-OPs-BOF/pull/30).
    ".config/Slack/Cookies", ".config/Slack/Network/Cookies",
    # Signal Desktop's database, and config.json, which holds its key in clear
    # (https://github.com/signalapp/Signal-Desktop/issues/5097).
    ".config/Signal/config.json", ".config/Signal/sql",
    "*.kdbx",            # KeePass's password databases (https://keepass.info/help/kb/kdbx.html)
    "*.p8",              # a PKCS#8 private key (https://iana.org/assignments/media-types/application/pkcs8: File extension .p8)
    # Command lines' tokens: the Supabase CLI's, in the home folder when no keyring is there
    # (https://github.com/supabase/cli/pull/702); Helm's repositories' passwords, at Helm 3's place and Helm 2's
    # (https://www.devopsschool.com/blog/helm-lab-2-helm-installation-configuration/: HELM_REPOSITORY_CONFIG;
    # https://github.com/helm/helm/issues/3092: the password in repositories.yaml).
    ".supabase/access-token", ".config/helm/repositories.yaml", ".helm/repository/repositories.yaml",
    # Terraform's timestamped state backups, terraform.tfstate.1700000000.backup, plain-text secrets as the state is
    # (https://developer.hashicorp.com/terraform/language/state/sensitive-data).
    "*.tfstate.*.backup",
    # More shells' histories: ksh's and the POSIX shell's default HISTFILE
    # (https://www.ibm.com/docs/en/aix/7.3.0?topic=commands-korn-shell-posix-shell-command-history), BusyBox ash's
    # (https://github.com/b3nj5m1n/xdg-ninja/issues/283), the ~/.histfile zsh's new-user wizard sets
    # (https://unix.stackexchange.com/questions/111718/command-history-in-zsh), fish's in its data folder
    # (https://github.com/fish-shell/fish-shell/issues/1669).
    ".sh_history", ".ash_history", ".histfile", ".local/share/fish/fish_history",
    # flyctl's config.yml, in ~/.fly, holds its access_token (https://github.com/superfly/flyctl/blob/master/internal/config/config.go)
    ".fly/config.yml",
    # act's secrets for a workflow run locally, read from .secrets unless --secret-file names another
    # (https://github.com/nektos/act/blob/master/cmd/root.go); dynaconf's `init` writes the secrets beside settings
    # as .secrets.toml, or .secrets.yaml and the rest by the format asked, and ignores .secrets.* in git
    # (https://github.com/dynaconf/dynaconf#readme).
    ".secrets", ".secrets.*",
    # Ansible's vault password, in the file its guide names (https://github.com/ansible/ansible-documentation/blob/devel/docs/docsite/rst/vault_guide/vault_using_encrypted_content.rst)
    ".vault_pass.txt",
    # A Kerberos keytab holds a principal's keys: whoever reads it is that principal
    # (https://docs.oracle.com/cd/E19082-01/819-3321/aadmin-10/index.html; http://web.mit.edu/kerberos/krb5-latest/doc/basic/keytab_def.html).
    "*.keytab",
    # GnuPG before 2.1 kept the private keys in secring.gpg, which 2.1 migrates from
    # (GnuPG's g10/migrate.c, https://gitverse.ru/githubmirror/gnupg2/content/master/g10/migrate.c); a copy of it
    # outside .gnupg is the same secret.
    "secring.gpg",
    ".wakatime.cfg",     # WakaTime's api_key (https://github.com/wakatime/wakatime-cli/blob/develop/USAGE.md)
    # OpenStack's clouds.yaml, read from the current folder, ~/.config/openstack and /etc/openstack, holds each
    # cloud's password (https://docs.openstack.org/openstacksdk/zed/user/guides/connect_from_config.html).
    "clouds.yaml",
    # Stripe's CLI keeps its login, the API keys, in ~/.config/stripe/config.toml (https://docs.stripe.com/cli/login.md).
    ".config/stripe",
    # Poetry keeps http-basic credentials and PyPI tokens in auth.toml of its config folder when no keyring is there
    # (github.com/python-poetry/poetry, src/poetry/config/config.py: Config.create's auth config source).
    ".config/pypoetry/auth.toml",
    # MySQL's login path file: user, password and host, obfuscated, not encrypted
    # (https://dev.mysql.com/doc/refman/8.0/en/mysql-config-editor.html).
    ".mylogin.cnf",
    # Cachix's `cachix authtoken` stores the token in ~/.config/cachix/cachix.dhall (https://docs.cachix.org/cli).
    ".config/cachix",
)

# An editor's or a tool's copy of a secret keeps what it holds under another name: Emacs's NAME~ and #NAME#
# (https://www.gnu.org/software/emacs/manual/html_node/emacs/Backup-Names.html), Vim's .NAME.swp
# (https://vimhelp.org/recover.txt.html), nano's NAME.save (man nano), and the .bak, .old and .orig that
# people, patch and merge tools leave. Made from every name of SECRETS with no glob and one part.
BACKUP_COPIES = ("{}~", "{}.bak", "{}.old", "{}.orig", "{}.swp", ".{}.swp", "#{}#", "{}.save")
SECRETS += tuple(dict.fromkeys(copy.format(name) for name in SECRETS if not GLOB_CHARACTERS.search(name)
                               and "/" not in name for copy in BACKUP_COPIES  # one a glob already covers is left out
                               if not any(fnmatch.fnmatchcase(copy.format(name), glob) for glob in SECRETS)))
SECRET_GLOBS = tuple(glob for name in SECRETS for glob in (name, f"*/{name}"))  # each name at the top and at any depth


def secret_name(path: str) -> bool:
    """Whether a path (relative to the workspace; a path alone, not its folders) has a secret's name, without
    regard to case: its last part is one of SECRETS, or a name of several parts ends there."""
    return _secret_parts(path.lower().strip("/"), last_only=True)


def secret_covers(path: str) -> bool:
    """Whether a path or a folder it lies in has a secret's name (a rule on .env covers .env/production and
    config/.env/keys). Each part is compared once, and a name of several parts only where its first part is:
    the cost grows with the path's length, never with its square (a 2,000-deep path, each folder tried whole
    against every glob, took over a second)."""
    return _secret_parts(path.lower().strip("/"), last_only=False)


def _secret_parts(lowered: str, *, last_only: bool) -> bool:
    parts = lowered.split("/")
    one_part, firsts, anywhere, at_end = _secret_matcher()
    if one_part(parts[-1]) if last_only else any(map(one_part, set(parts))):
        return True
    if firsts.isdisjoint(parts):  # no name of several parts starts anywhere here: the usual answer, at once
        return False
    return (at_end if last_only else anywhere).search(lowered) is not None


@functools.lru_cache(maxsize=1)
def _secret_matcher() -> tuple[Callable[[str], bool], frozenset[str], re.Pattern, re.Pattern]:
    """(one part's test, the first parts of the names of several parts, one expression for those anywhere
    and one for those at the path's end). A piece
    "*" of a name stands for one folder or more (.git/modules/a/modules/b/config is a nested submodule's);
    any other glob character stays within one part."""
    lowered = [name.lower() for name in SECRETS]
    one = any_glob(tuple(name for name in lowered if "/" not in name))
    several = [name.split("/") for name in lowered if "/" in name]

    def piece(glob: str) -> str:
        if glob == "*":
            return "[^/]+(?:/[^/]+)*"
        return "".join("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in glob)
    names = "(?:^|(?<=/))(?:" + "|".join("/".join(map(piece, pieces)) for pieces in several) + ")"
    return (functools.lru_cache(maxsize=4096)(one), frozenset(pieces[0] for pieces in several),
            re.compile(names + "(?=/|$)"), re.compile(names + r"\Z"))


def secret_glob(path: str) -> str:
    """The secret's name a path has (for the reason shown), or ""."""
    lowered = path.lower()
    return next((name for name in SECRETS if any(fnmatch.fnmatchcase(lowered, glob.lower()) for glob in (name, f"*/{name}"))), "")
