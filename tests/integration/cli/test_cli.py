#!/usr/bin/env python3
"""The command-line convention every provkit tool follows (provkit/cli/convention.hpp), on the real binaries:
- every global option is accepted before and after every subcommand it applies to, and takes effect there
  (the Hub simulator records what hf-fetch asked, envbuild's cache and managed interpreters show up on disk);
- a global option given with a command it cannot apply to is refused, exit 2, naming it, before any work;
- an unknown option is named with the nearest known one, exit 2;
- Usage names the tool by its name, not by the path it was started by;
- the man page (built by help2man in the build tree) holds every subcommand's options.

Usage: test_cli.py TEST...   (one ctest per `def test_...`, registered by tests/integration/discover.cmake)
"""
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.dirname(HERE)
sys.path[:0] = [INTEGRATION, os.path.join(INTEGRATION, "hf-fetch"), os.path.join(INTEGRATION, "envbuild")]
import common  # noqa: E402
import envbuild_fixtures as eb  # noqa: E402
import hf_fixtures as hf  # noqa: E402
import make_wheels as wheels  # noqa: E402
from common import BIN, BUILD, HubSim, check, main, make_repo, tempdir, tool  # noqa: E402

XY = "%d.%d" % sys.version_info[:2]


def run(name, *args, env=None, timeout=120):
    return common.run([tool(name), *args], expect=None, env=env if env is not None else hf.clean_env(),
                      timeout=timeout)


def expect(r, rc, what):
    check(r.rc == rc, f"{what}: exit {r.rc}, expected {rc}\n{r!r}")


def both_sides(command, options, rest):
    """The arguments with `options` before the subcommand, and after the subcommand and its arguments."""
    return [("before", [*options, *command, *rest]), ("after", [*command, *rest, *options])]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------------------------- hf-fetch

FILES = {"config.json": b'{"model_type": "cli-test"}\n', "model.safetensors": hf.blob(64 << 10, "cli")}
LFS = {"model.safetensors"}


def hub_repos():
    """A public and a private repository for the simulator; returns the repos.json path."""
    tmp = tempdir("cli-hub-")
    make_repo(tmp, "org/model", FILES, lfs=LFS)
    make_repo(tmp, "org/private", FILES, lfs=LFS, private=True, tokens=[hf.TOKEN])
    return tmp, os.path.join(tmp, "repos.json")


def test_hf_fetch_globals_before_and_after_manifest_create():
    tmp, repos = hub_repos()
    token_file = write(os.path.join(tmp, "token"), hf.TOKEN + "\n")
    create = ["manifest", "create"]
    with HubSim(repos) as sim:
        def created(side, argv, repo="org/model", rc=0, timeout=60):
            out = os.path.join(tmp, f"{repo.replace('/', '-')}-{side}-{len(os.listdir(tmp))}.yaml")
            sim.clear_requests()
            r = run("hf-fetch", *argv, "-o", out, timeout=timeout)
            expect(r, rc, f"hf-fetch {' '.join(argv)} ({side})")
            if rc == 0:
                check(f"repo: {repo}" in open(out).read(), f"{out} is {repo}'s manifest")
            return r

        # --endpoint: the requests reach the simulator (today's bug: before the subcommand it went to huggingface.co).
        for side, argv in both_sides(create, ["--endpoint", sim.hub], ["org/model"]):
            r = created(side, argv)
            check(any("/api/models/org/model" in q["path"] for q in sim.requests()), f"--endpoint {side}: the Hub was asked")
            check("ADDED config.json" in r.out, f"without --quiet the files are listed\n{r!r}")

        # --token-file: the private repository answers only to the token, and the token is what was sent.
        created("control", ["manifest", "create", "org/private", "--endpoint", sim.hub], "org/private", rc=4)
        for side, argv in both_sides(create, ["--endpoint", sim.hub, "--token-file", token_file], ["org/private"]):
            created(side, argv, "org/private")
            auth = {hf.header(q, "authorization") for q in sim.requests(origin="hub")}
            check(auth == {"Bearer " + hf.TOKEN}, f"--token-file {side}: every Hub request carried the token: {auth}")

        # --retries 1: one 503 is not retried (the default would retry it and succeed).
        for side, argv in both_sides(create, ["--endpoint", sim.hub, "--retries", "1"], ["org/model"]):
            sim.set_faults([{"kind": "status", "code": 503, "times": 1}])
            created(side, argv, rc=3)
            check(len(sim.requests()) == 1, f"--retries 1 {side}: one attempt, got {len(sim.requests())}")
        sim.set_faults([])

        # --stall-timeout 1: a download stalled for a minute is abandoned after a second and retried
        # (with the default of 60 s the run would outlast its 30 s limit).
        for side, argv in both_sides(create, ["--endpoint", sim.hub, "--stall-timeout", "1"], ["org/model"]):
            sim.set_faults([{"kind": "stall", "at": 1, "seconds": 60, "times": 1}])
            start = time.monotonic()
            created(side, argv, timeout=30)
            check(time.monotonic() - start < 20, f"--stall-timeout {side}: the stall was cut short")
            check([f for f in sim.faults() if f["kind"] == "stall"][0]["fired"] == 1, "the stall happened")
        sim.set_faults([])

        # --json: JSON lines; --quiet: nothing but problems.
        for side, argv in both_sides(create, ["--endpoint", sim.hub, "--json"], ["org/model"]):
            events = created(side, argv).json_events()
            check(any(e["event"] == "file" and e["path"] == "config.json" for e in events), f"--json {side}: {events}")
        for side, argv in both_sides(create, ["--endpoint", sim.hub, "--quiet"], ["org/model"]):
            r = created(side, argv)
            check(r.out == "", f"--quiet {side}: nothing on stdout\n{r!r}")


def filled_cache():
    """A repository fetched into a cache: (Repo, fetch output)."""
    repo = hf.Repo(FILES, lfs=LFS)
    with HubSim(repo.repos_json) as sim:
        r = hf.hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--endpoint", sim.hub)
        expect(r, 0, "filling the cache")
    return repo


def test_hf_fetch_globals_before_and_after_mirror_export():
    repo = filled_cache()
    export = ["mirror", "export"]
    where = ["--manifest", repo.manifest, "--cache-dir", repo.cache]
    n = 0

    def exported(side, options):
        nonlocal n
        n += 1
        to = os.path.join(repo.tmp, f"export-{n}")
        r = run("hf-fetch", *dict(both_sides(export, options, ["--to", to]))[side])
        expect(r, 0, f"mirror export {options} ({side})")
        for path in FILES:  # the manifest's files, from this cache
            found = [os.path.join(d, f) for d, _, fs in os.walk(to) for f in fs if f == os.path.basename(path)]
            check(found and open(found[0], "rb").read() == FILES[path], f"{side}: {path} exported from the cache")
        return r

    for side in ("before", "after"):
        # --manifest and --cache-dir: the files come from that cache (the default cache is empty).
        r = exported(side, where)
        check("exported 2 verified files" in r.out, f"{side}: {r!r}")
        events = exported(side, where + ["--json"]).json_events()
        summary = [e for e in events if e["event"] == "summary"]
        check(summary and summary[0]["mode"] == "mirror-export" and summary[0]["files"] == 2, f"--json {side}: {events}")
        r = exported(side, where + ["--quiet"])
        check(r.out == "", f"--quiet {side}: nothing on stdout\n{r!r}")


def test_hf_fetch_option_refused_where_it_cannot_apply():
    repo = filled_cache()
    token_file = write(os.path.join(repo.tmp, "token"), hf.TOKEN)
    to = os.path.join(repo.tmp, "export")
    out = os.path.join(repo.tmp, "created.yaml")
    with HubSim(repo.repos_json) as sim:
        export = (["mirror", "export"], ["--manifest", repo.manifest, "--cache-dir", repo.cache, "--to", to])
        create = (["manifest", "create"], [repo.repo_id, "--endpoint", sim.hub, "-o", out])
        inspect = (["inspect"], [repo.repo_id, "--endpoint", sim.hub])
        cases = [
            # mirror export makes no request: the Hub options mean nothing there.
            (export, ["--endpoint", sim.hub]), (export, ["--token-file", token_file]), (export, ["--retries", "2"]),
            (export, ["--stall-timeout", "5"]),
            # options of the fetch itself
            (export, ["--jobs", "2"]), (export, ["--offline"]), (create, ["--local-dir", to + "-local"]),
            (create, ["--connections", "2"]), (create, ["--verify-only"]), (create, ["--max-rate", "1M"]),
            # manifest create reads no cache and no manifest
            (create, ["--cache-dir", repo.cache]), (create, ["--manifest", repo.manifest]),
            # inspect reads headers: no cache, no download options
            (inspect, ["--cache-dir", repo.cache]), (inspect, ["--offline"]), (inspect, ["--connections", "2"]),
        ]
        for (command, rest), option in cases:
            for side, argv in both_sides(command, option, rest):
                sim.clear_requests()
                r = run("hf-fetch", *argv)
                expect(r, 2, f"{option[0]} with {' '.join(command)} ({side})")
                check(f"hf-fetch: {option[0]} does not apply to hf-fetch {' '.join(command)}; it is an option of "
                      in r.err, f"the sentence names {option[0]} and the command ({side})\n{r!r}")
                check(sim.requests() == [], f"{option[0]} ({side}): nothing was asked of the Hub")
                check(not os.path.exists(to) and not os.path.exists(out), f"{option[0]} ({side}): nothing written")


def test_hf_fetch_unknown_option_names_the_nearest():
    cases = [
        (["--manifst", "m.yaml"], "--manifst", "--manifest"),
        (["--conections", "4", "--manifest", "m.yaml"], "--conections", "--connections"),
        (["manifest", "create", "org/model", "--endpont", "http://127.0.0.1:9"], "--endpont", "--endpoint"),
        (["manifest", "create", "org/model", "--exlude", "*.bin"], "--exlude", "--exclude"),
        (["mirror", "export", "--to", "d", "--manifest", "m", "--cache-dri", "c"], "--cache-dri", "--cache-dir"),
        (["--stall-timout=5", "--manifest", "m.yaml"], "--stall-timout", "--stall-timeout"),
    ]
    for argv, given, meant in cases:
        r = run("hf-fetch", *argv)
        expect(r, 2, " ".join(argv))
        check(f"hf-fetch: unknown option {given}; did you mean {meant}?" in r.err, f"{argv}\n{r!r}")
    r = run("hf-fetch", "--frobnicate", "--manifest", "m.yaml")
    expect(r, 2, "--frobnicate")
    check("hf-fetch: unknown option --frobnicate" in r.err and "did you mean" not in r.err, repr(r))
    # An option of a subcommand given before it says where it belongs.
    r = run("hf-fetch", "--to", "d", "mirror", "export", "--manifest", "m.yaml")
    expect(r, 2, "--to before mirror export")
    check("hf-fetch: --to is an option of hf-fetch mirror export;" in r.err, repr(r))


# ---------------------------------------------------------------------------------------------- envbuild

def cached_interpreters(cache):
    """What envbuild remembered about interpreters in the wheel cache."""
    d = os.path.join(cache, "interpreters")
    return [n for n in os.listdir(d) if n.endswith(".json")] if os.path.isdir(d) else []


def wheel_and_lock(tmp):
    wheel_dir = os.path.join(tmp, "wheels")
    os.makedirs(wheel_dir)
    wheels.pure_wheel(wheel_dir, "1.0")
    lock = eb.write_lock(os.path.join(tmp, "lock.txt"), [os.path.join(wheel_dir, n) for n in os.listdir(wheel_dir)])
    return wheel_dir, lock


def test_envbuild_globals_before_and_after_every_subcommand():
    tmp = tempdir("cli-envbuild-")
    wheel_dir, lock = wheel_and_lock(tmp)
    archive = eb.make_standalone_archive(os.path.join(tmp, "cpython-standalone"), "gz")
    for side in ("before", "after"):
        def argv(command, options, rest):
            return dict(both_sides(command, options, rest))[side]

        # python install: into --python-dir, its interpreter described in --cache-dir.
        cache, pythons = os.path.join(tmp, f"cache-install-{side}"), os.path.join(tmp, f"pythons-{side}")
        r = run("envbuild", *argv(["python", "install"], ["--cache-dir", cache, "--python-dir", pythons],
                                  [archive, "--sha256", eb.sha256(archive)]))
        expect(r, 0, f"python install ({side})")
        check(f"installed at {pythons}/" in r.out, f"python install --python-dir ({side})\n{r!r}")
        check(cached_interpreters(cache), f"python install --cache-dir ({side}): the cache was used")

        # python find: looks in --python-dir first.
        r = run("envbuild", *argv(["python", "find"], ["--python-dir", pythons], [XY]))
        expect(r, 0, f"python find ({side})")
        check(r.out.startswith(pythons + "/") and r.out.strip().endswith("/python/bin/python" + XY),
              f"python find --python-dir ({side})\n{r!r}")

        # create: the wheel cache (--cache-dir) and the managed interpreter (--python-dir).
        cache = os.path.join(tmp, f"cache-create-{side}")
        env = os.path.join(tmp, f"env-{side}")
        r = run("envbuild", *argv(["create"], ["--cache-dir", cache, "--python-dir", pythons],
                                  [env, "--python", XY, "--lock", lock, "-f", wheel_dir]))
        expect(r, 0, f"create ({side})")
        check(cached_interpreters(cache), f"create --cache-dir ({side}): the cache was used\n{r!r}")
        check(os.readlink(os.path.join(env, "bin", "python")).startswith(pythons + "/"),
              f"create --python-dir ({side}): the managed interpreter was used")

        # verify --lock asks the environment's interpreter its markers, through the cache.
        cache = os.path.join(tmp, f"cache-verify-{side}")
        r = run("envbuild", *argv(["verify"], ["--cache-dir", cache], [env, "--lock", lock]))
        expect(r, 0, f"verify ({side})")
        check(cached_interpreters(cache), f"verify --cache-dir ({side}): the cache was used\n{r!r}")


def test_envbuild_option_refused_where_it_cannot_apply():
    tmp = tempdir("cli-envbuild-")
    wheel_dir, lock = wheel_and_lock(tmp)
    unused = os.path.join(tmp, "never-made")
    env = os.path.join(tmp, "env")
    cases = [
        (["diff"], [lock, lock], "--cache-dir"), (["diff"], [lock, lock], "--python-dir"),
        (["capture"], [env, "--wheelhouse", os.path.join(tmp, "wh"), "--lock", os.path.join(tmp, "out.txt")],
         "--cache-dir"),
        (["verify"], [env], "--python-dir"),
        (["python", "find"], [XY], "--cache-dir"),
    ]
    for command, rest, option in cases:
        for side, argv in both_sides(command, [option, unused], rest):
            r = run("envbuild", *argv)
            expect(r, 2, f"{option} with {' '.join(command)} ({side})")
            check(f"envbuild: {option} does not apply to envbuild {' '.join(command)}; it is an option of " in r.err,
                  f"the sentence names {option} and the command ({side})\n{r!r}")
            check(r.out == "" and not os.path.exists(unused), f"{option} ({side}): nothing was run")


def test_envbuild_link_mode_is_refused_with_the_command_line():
    """A --link-mode that is none is a command-line mistake, said naming the flag before anything is done: no
    interpreter looked for, no environment made (before: the library's sentence, after the interpreter was found,
    so a missing interpreter hid it)."""
    tmp = tempdir("cli-envbuild-")
    _, lock = wheel_and_lock(tmp)
    env = os.path.join(tmp, "env")
    r = run("envbuild", "create", env, "--json", "--python", "/nonexistent/python3", "--lock", lock,
            "--link-mode", "symlink")
    expect(r, 2, "--link-mode symlink")
    check("--link-mode: must be clone, hardlink or copy, not 'symlink'" in r.err, f"the flag is not named\n{r!r}")
    summary = [json.loads(x) for x in r.out.splitlines() if x.strip()][-1]
    check(summary["reason"] == "usage" and "--link-mode" in summary["message"], f"summary: {summary}")
    check(not os.path.exists(env), "an environment was started")


def test_envbuild_missing_interpreter_is_said_by_what_named_it():
    """The library says which interpreter it did not find; the tool says where that came from: --python for
    create, the SPEC argument for `python find` (before: both said "--python 3.99", a flag `python find` has not)."""
    tmp = tempdir("cli-envbuild-")
    _, lock = wheel_and_lock(tmp)
    r = run("envbuild", "create", os.path.join(tmp, "env"), "--python", "3.99", "--lock", lock)
    expect(r, 2, "create --python 3.99")
    check("envbuild: --python: no interpreter found for 3.99 (looked in:" in r.err, f"create\n{r!r}")
    r = run("envbuild", "python", "find", "3.99")
    expect(r, 2, "python find 3.99")
    check("envbuild: no interpreter found for 3.99 (looked in:" in r.err and "--python" not in r.err,
          f"python find\n{r!r}")


def test_envbuild_unknown_option_names_the_nearest():
    tmp = tempdir("cli-envbuild-")
    env, lock = os.path.join(tmp, "env"), os.path.join(tmp, "lock.txt")
    cases = [
        (["create", env, "--pyton", XY, "--lock", lock], "--pyton", "--python"),
        (["create", env, "--python", XY, "--lock", lock, "--find-link", tmp], "--find-link", "--find-links"),
        (["--cache-dri", tmp, "verify", env], "--cache-dri", "--cache-dir"),
        (["verify", env, "--jsn"], "--jsn", "--json"),
        (["python", "install", "a.tar.gz", "--sha265", "00"], "--sha265", "--sha256"),
    ]
    for argv, given, meant in cases:
        r = run("envbuild", *argv)
        expect(r, 2, " ".join(argv))
        check(f"envbuild: unknown option {given}; did you mean {meant}?" in r.err, f"{argv}\n{r!r}")
    r = run("envbuild", "--frobnicate", "diff", lock, lock)
    expect(r, 2, "--frobnicate")
    check("envbuild: unknown option --frobnicate" in r.err and "did you mean" not in r.err, repr(r))
    r = run("envbuild", "--lock", lock, "create", env, "--python", XY)
    expect(r, 2, "--lock before create")
    check("envbuild: --lock is an option of envbuild create, envbuild verify and envbuild capture;" in r.err, repr(r))


# ---------------------------------------------------------------------------------------------- envcheck

def test_envcheck_unknown_option_names_the_nearest():
    for argv, given, meant in [(["--pyton"], "--pyton", "--python"), (["--vram-fre", "1G"], "--vram-fre", "--vram-free"),
                               (["--cc", "--port-fre", "80"], "--port-fre", "--port-free")]:
        r = run("envcheck", *argv)
        expect(r, 2, " ".join(argv))
        check(f"envcheck: unknown option {given}; did you mean {meant}?" in r.err, f"{argv}\n{r!r}")
    r = run("envcheck", "--frobnicate")
    expect(r, 2, "--frobnicate")
    check("envcheck: unknown option --frobnicate" in r.err and "did you mean" not in r.err, repr(r))


# ---------------------------------------------------------------------------------------------- every tool

SUBCOMMANDS = {
    "hf-fetch": [[], ["manifest", "create"], ["mirror", "export"], ["inspect"]],
    "envbuild": [["create"], ["verify"], ["capture"], ["diff"], ["python", "install"], ["python", "find"]],
    "envcheck": [[]],
}


def usage_names_the_tool(tool):
    """Started by its full path, the tool calls itself by its name in Usage and in its sentences."""
    path = os.path.join(BIN, tool)
    for command in [[]] + SUBCOMMANDS[tool]:
        r = run(tool, *command, "--help")
        expect(r, 0, f"{tool} {' '.join(command)} --help")
        usage = [line for line in r.out.splitlines() if line.startswith("Usage:")]
        check(usage and usage[0].startswith(" ".join(["Usage:", tool, *command]) + " "), f"{command}: {usage}")
        check(path not in r.all, f"{tool} {' '.join(command)} --help shows its path\n{r!r}")
    r = run(tool, "--frobnicate")
    expect(r, 2, f"{tool} --frobnicate")
    check(r.err.startswith(tool + ": ") and path not in r.err, repr(r))


def test_hf_fetch_usage_names_the_tool():
    usage_names_the_tool("hf-fetch")


def test_envbuild_usage_names_the_tool():
    usage_names_the_tool("envbuild")


def test_envcheck_usage_names_the_tool():
    usage_names_the_tool("envcheck")


def man_sections(tool):
    """The man page help2man built, as {section heading: text}, roff escapes undone."""
    page = os.path.join(BUILD, "man", tool + ".1")
    check(os.path.exists(page), f"{page} was not built")
    check(os.path.getmtime(page) >= os.path.getmtime(os.path.join(BIN, tool)), f"{page} is older than {tool}")
    text = re.sub(r"\\f[BIRP]", "", open(page).read()).replace("\\-", "-")
    sections, current = {}, None
    for line in text.splitlines():
        m = re.match(r'^\.S[HS]\s+"?(.*?)"?\s*$', line)
        if m:
            current = m.group(1).rstrip(":")
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return sections


def man_page_has_every_option(tool):
    """Each command's options, as its own --help lists them, are in the man page: a subcommand's in its own section."""
    sections = man_sections(tool)
    whole = "\n".join(sections.values())
    for command in SUBCOMMANDS[tool]:
        r = run(tool, *command, "--help")
        expect(r, 0, f"{tool} {' '.join(command)} --help")
        options = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", r.out)) - {"--help"}
        check(options, f"{tool} {' '.join(command)} --help lists options")
        name = " ".join([tool, *command])
        text = sections.get(name) if command else whole
        check(text is not None, f"{tool}.1 has a section for {name}: {sorted(sections)}")
        missing = sorted(o for o in options if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", text))
        check(not missing, f"{tool}.1 lacks {name}'s options {missing}")


def test_hf_fetch_man_page_has_every_subcommands_options():
    man_page_has_every_option("hf-fetch")


def test_envbuild_man_page_has_every_subcommands_options():
    man_page_has_every_option("envbuild")


def test_envcheck_man_page_has_every_option():
    man_page_has_every_option("envcheck")


if __name__ == "__main__":
    main()
