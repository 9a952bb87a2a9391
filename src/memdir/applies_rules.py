"""The offline rules behind ``applies_when``: situations and the cues in a memory that name them.

Each entry is (situation, cue pattern). The situation is what a request for that kind of task
says, written once, in ordinary words, so it reads well in a memory's frontmatter and matches
requests word by word (:mod:`memdir.recall.applies_match`) and by class of task
(:mod:`memdir.recall.intents`). The cue pattern is what a memory governing such tasks names:
whole families from general knowledge — package managers and their manifests, test runners,
deployment and release tools, clusters and infrastructure, monitoring, secrets stores, database
migration tools, linters, UI frameworks — not the words of any evaluation item. Patterns are
matched case-insensitively on word boundaries (:func:`memdir.applies_when.derive`).

A situation's text is part of the stored format: changing it changes what existing lists say,
so new classes of task get new entries and old texts stay as they are.
"""

from __future__ import annotations

_PACKAGE_TOOLS = (
    r"npm|npx|yarn|pnpm|bun|deno|pipx?|pipenv|pdm|hatch|rye|uv|poetry|conda|mamba|micromamba|"
    r"cargo|crates?|gem|gemfile|bundler?|composer|maven|gradle|sbt|brew|homebrew|apt(-get)?|"
    r"nuget|go get|go mod|go\.mod|go\.sum|swift package manager|spm|package\.swift|"
    r"cocoapods|podfile|carthage|vcpkg|conan|cabal|opam|renv|cran|"
    r"requirements\.txt|package\.json|pyproject(\.toml)?|environment\.ya?ml|"
    r"lockfile|lock file|dependenc(y|ies)|third-party|packages?|librar(y|ies)|plugins?|"
    r"licen[cs]es?|GPL|AGPL|workspaces?|install(ing|ed)?"
)
DEPENDENCY = (
    "adding, installing, upgrading or vendoring a dependency, package, library, module, plugin, "
    "SDK, linter, formatter or other tool"
)
SITUATIONS: tuple[tuple[str, str], ...] = (
    (DEPENDENCY, _PACKAGE_TOOLS),
    (
        "deleting, pruning, cleaning up, pushing, rebasing or merging git branches, tags and refs "
        "on origin or a remote; rewriting or squashing history",
        r"branch(es)?|force-push|force-with-lease|rebase|git push|remote|main|trunk",
    ),
    (
        "committing changes, commit messages and pull requests",
        r"commits?|commit messages?|pull requests?|PRs?|squash|merge requests?|MRs?",
    ),
    (
        "handling passwords, tokens, API keys, credentials or other secrets; dotenv files",
        r"credentials?|secrets?|passwords?|tokens?|api keys?|vault|1password|\.env|sops|"
        r"keychain|keystore|kms|keyring|signing (secret|keys?)|certificates?|"
        r"secrets? manager|doppler|encrypted",
    ),
    (
        "querying, counting or changing data in the database: SQL, SELECT, UPDATE, tables, rows, "
        "records, schema revisions and migrations",
        r"database|postgres(ql)?|mysql|mariadb|sqlite|mongo(db)?|sql|alembic|flyway|liquibase|"
        r"goose|prisma|knex|typeorm|sequelize|eloquent|active ?record|migrations?|schema|"
        r"replica|indexes|sqlalchemy|orm|queries|query|columns?",
    ),
    (
        "querying or touching live production data, records or servers",
        r"production|prod|live|read replica|metabase",
    ),
    (
        "writing or running tests, test suites, fixtures, mocks, seed data and samples",
        r"tests?|pytest|unittest|jest|vitest|mocha|rspec|minitest|phpunit|pest|xctest|junit|"
        r"kotest|espresso|cypress|playwright|go test|t\.run|testcontainers|sqlmock|mocks?|"
        r"fixtures?|factories|table-driven|coverage|specs?",
    ),
    (
        "deploying, releasing or shipping to staging, pre-production or production; hotfixes",
        r"deploy(s|ed|ing|ments?)?|staging|production|releases?|rollouts?|hotfix(es)?|"
        r"argo ?cd|argocd|fastlane|testflight|app store|play store|google play|submissions?|"
        r"envoyer|capistrano|heroku|vercel|netlify|release train",
    ),
    (
        "writing Dockerfiles, building container images, choosing a base image or FROM line",
        r"docker(file)?|containers?|images?|podman|buildkit|base image",
    ),
    (
        "logging, printing, dumping variables or debugging output to stdout",
        r"log(s|ging)?|structlog|print( statements)?|logger|stdout|stderr",
    ),
    (
        "calling or fetching external APIs, HTTP services, URLs, webhooks or callbacks",
        r"https?|httpx|requests library|aiohttp|axios|fetch|alamofire|guzzle|webhooks?|outbound",
    ),
    (
        "scheduling recurring, nightly, hourly or periodic jobs; crontab; running it every day",
        r"cron|crontab|scheduled|scheduler|periodic|temporal|nightly|celery beat|airflow|dags?",
    ),
    (
        "caching or memoizing data; storing sessions, state or keys in a cache",
        r"redis|memcached?|cach(e|ing)|ttl",
    ),
    (
        "building UI: pages, screens, components, widgets, forms, buttons, dropdowns, modals, "
        "dialogs, banners",
        r"react|vue|svelte|angular|components?|frontend|dashboard|ui|css|tailwind|wcag|"
        r"accessib(le|ility)|screen readers?|keyboard|swiftui|uikit|jetpack compose|flutter|"
        r"blade|livewire|inertia|htmx|storyboards?|screens?|xml layouts?",
    ),
    (
        "showing user-facing text, copy, labels, greetings, messages or translations",
        r"translations?|translators?|lokalise|crowdin|i18n|l10n|locales?|locali[sz](ed|ation)|"
        r"user-facing strings?|user-visible strings?|string catalog|xcstrings|gettext|"
        r"hard-coded (strings?|literals?)",
    ),
    (
        "storing, comparing or scheduling dates, times, hours and time zones",
        r"utc|time ?zones?|timestamps?|dst|datetime",
    ),
    (
        "computing money: amounts, prices, splitting, rounding, currency, dollars, euros, refunds",
        r"rounding|minor units|currency|amounts?|cents|refunds?|money|prices?|vat|tax(es)?",
    ),
    (
        "sending email, mailings, newsletters, reminders or notifications",
        r"e-?mails?|smtp|mail(pit|gun|ing)?|newsletters?|notifications?|push notifications?|"
        r"sendgrid|postmark|ses",
    ),
    (
        "speeding up slow code; making it faster; performance, profiling and optimisation",
        r"optimi[sz](e|ing|ation)s?|profil(e|ing|er)|py-spy|latency|p9[59]|performance|slow|"
        r"n\+1|eager[- ]load(ing)?|lazy[- ]loading|throughput|benchmarks?|explain analyze|"
        r"query plans?|indexes|indices",
    ),
    (
        "refactoring, renaming or moving code across several files, modules or packages",
        r"refactors?|renam(e|ing)|more than one file|multiple files",
    ),
    (
        "writing shell scripts, utilities and automation",
        r"bash|shell|shellcheck|zsh|scripts?",
    ),
    (
        "handling customer personal data: emails, addresses, names, subscribers or users in "
        "tickets, logs or samples",
        r"pii|personal data|gdpr|ccpa|customer data|ibans?|redact|privacy|"
        r"deletion requests?|data export",
    ),
    (
        "type checking, annotations and silencing checker complaints",
        r"mypy|pyright|type: ignore|typing|annotations?|typeddict|protocols?",
    ),
    (
        "editing or patching generated clients, SDKs or stubs",
        r"generated|openapi|protobuf|stubs|codegen",
    ),
    (
        "using new language versions, syntax or interpreter features",
        r"python 3\.\d+|3\.1\d|node \d+|language version|deployment target|ios \d+|"
        r"android \d+|api level|min ?sdk|#available|@available|php \d\.\d|go 1\.\d+|java \d+",
    ),
    (
        "publishing or consuming events and messages; queues",
        r"kafka|rabbitmq|sqs|nats|events?|producers?|consumers?|queues?|pub/?sub|horizon|"
        r"sidekiq|celery|bullmq|resque|workers?|background jobs?",
    ),
    (
        "hiding features behind flags or toggles; beta rollouts",
        r"feature flags?|launchdarkly|unleash|toggles?|flags?",
    ),
    (
        "actions that need someone's approval or sign-off",
        r"approv(al|er|e)|sign-?off|asking|ask first|go-ahead|permission",
    ),
    (
        "changing code or rules another team owns",
        r"belongs to|owned by|owners?",
    ),
    (
        "changing, extending or deprecating API endpoints and routes",
        r"endpoints?|routes?|sunset|deprecat(ed|ion)|rest api|v\d routes",
    ),
    # Added by recall3 (issue #20): classes of task the first table had no entry for.
    (
        "deleting, dropping, wiping, truncating or resetting data, tables, files or "
        "environments; destructive or irreversible operations",
        r"delet(e|es|ed|ing|ion)|drop(s|ped|ping)?|wipe[sd]?|wiping|truncat(e|es|ed|ing)|"
        r"purg(e|es|ed|ing)|eras(e|es|ed|ing)|rm -rf|destructive|irreversible|"
        r"migrate:fresh|db:wipe|destroy(s|ed|ing)?|tear(ing)? down",
    ),
    (
        "investigating crashes, errors, alerts, outages or slowness of a running service or "
        "app; dashboards, metrics and traces",
        r"grafana|datadog|sentry|crashlytics|bugsnag|rollbar|prometheus|new relic|honeycomb|"
        r"kibana|splunk|cloudwatch|dashboards?|metrics|alerts?|alerting|slos?|stack traces?|"
        r"crash(es)?|on-?call|pagerduty|opsgenie|incidents?|monitoring|observability|uptime",
    ),
    (
        "changing cluster, server or infrastructure configuration: scaling, replicas, pods, "
        "nodes, environment settings",
        r"kubectl|helm|kubernetes|k8s|flux|terraform|pulumi|ansible|cloudformation|"
        r"cluster|pods?|replicas|nodes?|infrastructure|manifests?|ingress|autoscal\w+|"
        r"ecs|eks|gke|aks|nomad|forge",
    ),
    (
        "running training, batch or GPU jobs on a cluster or remote machines; long experiments",
        r"slurm|sbatch|srun|squeue|gpus?|cuda|a100|h100|v100|tpus?|login nodes?|partitions?|"
        r"hpc|training|batch jobs?|ray|dask|spark|databricks|kubeflow",
    ),
    (
        "tracking experiments, runs and metrics; reporting results, numbers, tables and plots",
        r"wandb|weights (&|and) biases|mlflow|tensorboard|neptune|comet|experiments?|sweeps?|"
        r"seeds?|reproduc(e|ible|ibility)|ablations?|baselines?",
    ),
    (
        "storing or sharing large files, model weights, checkpoints, datasets and artifacts; "
        "uploads",
        r"s3|gcs|buckets?|rclone|git-lfs|lfs|checkpoints?|artifacts?|datasets?|uploads?|"
        r"blobs?|object storage|minio|dvc|hugging ?face",
    ),
    (
        "sharing or publishing data, datasets or files outside the team; licences and "
        "redistribution",
        r"redistribut(e|ed|ion|ing)|licen[cs](e|es|ing)|terms of (use|service)|"
        r"data (use )?agreements?|confidential|nda|publicly",
    ),
    (
        "handling errors, failures and exceptions; retries and error messages",
        r"errors?|exceptions?|failures?|panics?|retr(y|ies)|fmt\.errorf|raise|throw|"
        r"try/except|try/catch|error handling",
    ),
    (
        "running linters and formatters; fixing or silencing warnings",
        r"lint(er|ers|ing)?|golangci(-lint)?|eslint|ruff|flake8|pylint|swiftlint|ktlint|"
        r"phpstan|psalm|rubocop|clippy|nolint|noqa|warnings?|formatters?|prettier|gofmt|rustfmt",
    ),
    (
        "handling optional, missing, nil or null values; unwrapping",
        r"force unwrap\w*|unwrap\w*|optionals?|nil|null|nullable|guard let|if let",
    ),
    (
        "taking payments: cards, checkout, charges, invoices, subscriptions and billing",
        r"stripe|cashier|paypal|adyen|braintree|card numbers?|credit cards?|checkout|pci|"
        r"payment (provider|gateway|processor)s?",
    ),
    (
        "choosing colours, spacing, fonts, icons or layout from the design",
        r"figma|sketch|zeplin|design (system|tokens|file|specs?)|designs|spacing|typography|"
        r"colou?r palette|mockups?",
    ),
    (
        "moving notebook or script code into modules, functions and packages for reuse",
        r"notebooks?|jupyter|ipynb|colab|reused|reusable",
    ),
    (
        "planning work against deadlines, freezes, release dates and cut-offs",
        r"deadlines?|freeze|frozen|camera-ready|code freeze|cut-?off|milestones?",
    ),
)
# A memory about the user (their background, how they learn) governs explanations.
EXPLAIN = "explaining, describing or teaching a concept; walking through how something works"
EXPLAIN_CUES = (
    r"explain|analog(y|ies)|background|fluent|new to|knows|expert|engineer|scientist|"
    r"wrote \w+|learn|frame|developer|student|comfortable with|relate"
)
STYLE = "writing replies: length, tone and format of answers"
STYLE_CUES = r"answers?|repl(y|ies)|summar(y|ies)|terse|tone|verbose|brevity"

__all__ = ["DEPENDENCY", "EXPLAIN", "EXPLAIN_CUES", "SITUATIONS", "STYLE", "STYLE_CUES"]
