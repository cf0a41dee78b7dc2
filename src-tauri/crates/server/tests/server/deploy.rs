//! The deploy files (`deploy/`): the systemd unit verified and scored by `systemd-analyze`, the
//! configs they ship read by the server's own reader, the Kubernetes manifests and the compose
//! file checked for what they promise (probes, the drain, the secrets), and the image built from
//! the Dockerfile's runtime stage and run by podman, answering `/healthz`. A tool that cannot run
//! here makes its test say exactly why and pass (a missing tool is installed by
//! `.ci/ensure-deps.sh`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::*;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_keypool-server")
}

fn run(program: &str, args: &[&str]) -> std::io::Result<Output> {
    Command::new(program).args(args).output()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Every document of a YAML file, as JSON (read by PyYAML, which `.ci/ensure-deps.sh` installs).
fn yaml(path: &Path) -> Vec<Value> {
    let script = "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))";
    let output = run("python3", &["-c", script, path.to_str().unwrap()]).expect("python3 runs");
    assert!(output.status.success(), "{} is YAML: {}", path.display(), text(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `keypool-server check --config FILE`: whether the server would start on it, with the
/// compose team's ledger password set as `secrets/ledger.env` sets it.
fn would_start(path: &Path) -> String {
    let output = Command::new(binary())
        .args(["check", "--config", path.to_str().unwrap()])
        .env("KEYPOOL_LEDGER_PASSWORD", "from-secrets-ledger-env")
        .output()
        .unwrap();
    assert!(output.status.success(), "{} would not start the server: {}", path.display(), text(&output));
    text(&output)
}

/// The drain_seconds a config says (600 when it says nothing).
fn drain_seconds(config: &str) -> u64 {
    config
        .lines()
        .find_map(|line| line.trim().strip_prefix("drain_seconds")?.trim().strip_prefix('=')?.trim().parse().ok())
        .unwrap_or(600)
}

#[test]
fn the_systemd_unit_verifies_and_is_scored_ok_by_systemd_analyze() {
    let unit = std::fs::read_to_string(deploy().join("keypool-server.service")).unwrap();
    let stop: u64 = unit.lines().find_map(|l| l.strip_prefix("TimeoutStopSec=")?.parse().ok()).expect("a stop timeout");
    assert!(stop > 600 + 5, "systemd waits longer than the default drain and the answers cut off: {stop}");
    for hardening in ["DynamicUser=yes", "ProtectSystem=strict", "NoNewPrivileges=yes", "StateDirectory=keypool-server"]
    {
        assert!(unit.lines().any(|l| l == hardening), "the unit says {hardening}");
    }
    if run("systemd-analyze", &["--version"]).is_err() {
        return eprintln!(
            "skipped: systemd-analyze is not installed (the systemd package; .ci/ensure-deps.sh installs it)"
        );
    }
    // Verified as installed, with the binary where the unit looks for it (here, the test's).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keypool-server.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/keypool-server", binary())).unwrap();
    let verified = run("systemd-analyze", &["verify", path.to_str().unwrap()]).unwrap();
    assert!(verified.status.success(), "systemd-analyze verify passes: {}", text(&verified));
    assert_eq!(text(&verified).trim(), "", "without a warning (an unknown key is only a warning)");
    let scored =
        run("systemd-analyze", &["security", "--offline=yes", "--threshold=20", path.to_str().unwrap()]).unwrap();
    let report = text(&scored);
    assert!(scored.status.success(), "an exposure of 2.0 or less (\"OK\"):\n{report}");
    let level = report.lines().find(|l| l.contains("Overall exposure level")).unwrap_or_default();
    eprintln!("systemd-analyze security: {level}");
}

#[test]
fn the_configs_the_deploy_files_ship_would_start_the_server() {
    let compose = deploy().join("compose/config.toml");
    assert!(would_start(&compose).contains("would start"), "the compose team's config");
    let configmap = yaml(&deploy().join("k8s/configmap.yaml"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, configmap[0]["data"]["config.toml"].as_str().unwrap()).unwrap();
    assert!(would_start(&path).contains("would start"), "the ConfigMap's config");
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "drain_seconds = \"soon\"\n").unwrap();
    let refused = run(binary(), &["check", "--config", broken.to_str().unwrap()]).unwrap();
    assert_eq!(refused.status.code(), Some(2), "and a bad one would not: {}", text(&refused));
    assert!(text(&refused).contains("line 1"), "naming its line: {}", text(&refused));
}

#[test]
fn the_kubernetes_manifests_probe_drain_and_take_their_secrets_from_the_secret() {
    let dir = deploy().join("k8s");
    let kustomization = yaml(&dir.join("kustomization.yaml"));
    let listed: Vec<&str> =
        kustomization[0]["resources"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml") && name != "kustomization.yaml")
        .collect();
    files.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, files, "the kustomization applies every manifest");
    let set = &yaml(&dir.join("statefulset.yaml"))[0];
    let pod = &set["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let probe = |name: &str| &container[name]["httpGet"];
    assert_eq!(probe("readinessProbe")["path"], "/readyz", "out of rotation while it drains");
    assert_eq!(probe("livenessProbe")["path"], "/healthz", "alive while it drains");
    for name in ["readinessProbe", "livenessProbe", "startupProbe"] {
        assert_eq!(
            probe(name)["httpHeaders"][0],
            serde_json::json!({ "name": "Host", "value": "localhost" }),
            "{name} names a Host the server answers to (not the pod's IP)"
        );
    }
    let pause = container["lifecycle"]["preStop"]["sleep"]["seconds"].as_u64().expect("a preStop pause");
    let config = yaml(&dir.join("configmap.yaml"))[0]["data"]["config.toml"].as_str().unwrap().to_owned();
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    assert!(
        grace > pause + drain_seconds(&config) + 5,
        "the grace period covers the pause, the drain and the last writes"
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
    let args: Vec<&str> = container["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(
        !args.iter().any(|a| a.contains("redis://") || a.contains("secret=")),
        "no secret in the arguments (the process list): {args:?}"
    );

    let secret = &yaml(&dir.join("secret.yaml"))[0];
    let has = |key: &str| secret["stringData"].get(key).is_some();
    for var in container["env"].as_array().unwrap() {
        let key = var["valueFrom"]["secretKeyRef"]["key"].as_str().unwrap();
        assert!(has(key), "the Secret holds {key}, which {} is read from", var["name"]);
    }
    let volumes = pod["volumes"].as_array().unwrap();
    for volume in volumes.iter().filter(|v| v.get("secret").is_some()) {
        for item in volume["secret"]["items"].as_array().unwrap() {
            assert!(has(item["key"].as_str().unwrap()), "the Secret holds the file {}", item["key"]);
        }
    }
    for var in config.lines().filter_map(|l| l.trim().strip_prefix("key = \"$")) {
        let name = var.trim_end_matches('"');
        assert!(container["env"].as_array().unwrap().iter().any(|v| v["name"] == name), "the config's ${name} is set");
    }

    let labels = &set["spec"]["template"]["metadata"]["labels"];
    let budget = &yaml(&dir.join("poddisruptionbudget.yaml"))[0];
    assert_eq!(budget["spec"]["maxUnavailable"], 1, "one replica at a time");
    for (key, value) in budget["spec"]["selector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(&labels[key], value, "the PodDisruptionBudget selects the replicas");
    }
    for service in yaml(&dir.join("service.yaml")) {
        for (key, value) in service["spec"]["selector"].as_object().unwrap() {
            assert_eq!(&labels[key], value, "{} selects the replicas", service["metadata"]["name"]);
        }
    }
}

#[test]
fn the_compose_team_is_two_replicas_of_one_team_with_redis_and_postgres() {
    let dir = deploy().join("compose");
    let compose = &yaml(&dir.join("compose.yaml"))[0];
    let services = compose["services"].as_object().unwrap();
    for name in ["keypool-a", "keypool-b", "redis", "postgres", "nginx"] {
        assert!(services.contains_key(name), "compose runs {name}");
    }
    let (a, b) = (&services["keypool-a"], &services["keypool-b"]);
    assert_eq!(a["command"], b["command"], "both replicas run alike");
    assert_eq!(a["configs"], b["configs"], "on one config");
    assert_ne!(a["volumes"], b["volumes"], "each with a data volume of its own");
    let command: Vec<&str> = a["command"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(command.contains(&"--team=compose"), "in one team: {command:?}");
    let grace = a["stop_grace_period"].as_str().unwrap().trim_end_matches('s').parse::<u64>().unwrap();
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(grace > drain_seconds(&config) + 5, "compose waits for the drain");
    let secrets = compose["secrets"].as_object().unwrap();
    for service in services.values() {
        for secret in service["secrets"].as_array().into_iter().flatten() {
            assert!(secrets.contains_key(secret.as_str().unwrap()), "the secret {secret} is declared");
        }
    }
    assert!(
        config.contains("ledger = \"postgres://keypool:$KEYPOOL_LEDGER_PASSWORD@postgres:5432/keypool"),
        "the replicas' ledger is the compose Postgres, its password from the environment"
    );
    let env_files: Vec<&str> = a["env_file"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(env_files.contains(&"secrets/ledger.env"), "which secrets.sh writes: {env_files:?}");
    let secrets_sh = std::fs::read_to_string(dir.join("secrets.sh")).unwrap();
    assert!(secrets_sh.contains("KEYPOOL_LEDGER_PASSWORD="), "secrets.sh writes the ledger's password");
    for file in ["nginx.conf", "config.toml", "secrets.sh", "env.example"] {
        assert!(dir.join(file).exists(), "{file} is beside compose.yaml");
    }
    let nginx = std::fs::read_to_string(dir.join("nginx.conf")).unwrap();
    assert!(nginx.contains("$proxy_add_x_forwarded_for"), "nginx names the client for the trusted proxies");
}

/// A way to run containers here, or why there is none.
struct Engine {
    /// Extra arguments of `podman run`.
    run: Vec<&'static str>,
}

impl Engine {
    /// podman, if it can build and run an image on this machine. It is tried with its default
    /// runtime, then runc (crun refuses cgroup v1 and hybrid hierarchies); the limits on open
    /// files and processes are set lower than this process's (raising them, as podman does by
    /// default, is refused inside a container or a VM that caps them).
    fn find(dir: &Path) -> Result<Engine, String> {
        let version = run("podman", &["--version"]).map_err(|_| "podman is not installed".to_owned())?;
        if !version.status.success() {
            return Err(format!("podman does not run: {}", text(&version)));
        }
        let probe = dir.join("probe");
        stage_runtime(&probe.join("root"));
        std::fs::copy(binary(), probe.join("root/keypool-server")).unwrap();
        let containerfile = "FROM scratch\nCOPY root/ /\nENTRYPOINT [\"/keypool-server\", \"--version\"]\n";
        std::fs::write(probe.join("Containerfile"), containerfile).unwrap();
        let image = format!("localhost/keypool-probe-test:{}", std::process::id());
        let built = run("podman", &["build", "-q", "-t", &image, probe.to_str().unwrap()]).unwrap();
        if !built.status.success() {
            return Err(format!("podman cannot build an image here: {}", text(&built).trim()));
        }
        let mut tried = Vec::new();
        let mut found = None;
        for runtime in [None, Some("runc")] {
            let mut args = vec!["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"];
            args.extend(runtime.map(|runtime| ["--runtime", runtime]).into_iter().flatten());
            let mut command = vec!["run", "--rm"];
            command.extend(args.iter().copied());
            command.push(&image);
            let ran = run("podman", &command).unwrap();
            if ran.status.success() {
                found = Some(Engine { run: args });
                break;
            }
            tried.push(format!("{}: {}", runtime.unwrap_or("its default runtime"), text(&ran).trim()));
        }
        let _ = run("podman", &["rmi", "-f", &image]);
        found.ok_or_else(|| format!("podman cannot run a container here ({})", tried.join("; ")))
    }
}

/// The libraries the server's binary loads (glibc, libm, libgcc_s, the loader), from this
/// machine, into `root`: a base of the image's runtime stage standing in for distroless's cc
/// image, which is on a registry these machines cannot reach.
fn stage_runtime(root: &Path) {
    let listed = run("ldd", &[binary()]).expect("ldd runs");
    for library in String::from_utf8_lossy(&listed.stdout).split_whitespace().filter(|w| w.starts_with('/')) {
        let inside = root.join(library.trim_start_matches('/'));
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        std::fs::copy(library, &inside).unwrap_or_else(|e| panic!("{library}: {e}"));
    }
}

/// Removes the test's containers, images and volume, however the test ends.
struct Cleanup(Vec<Vec<String>>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for args in &self.0 {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let _ = run("podman", &args);
        }
    }
}

#[tokio::test]
async fn the_image_builds_runs_unprivileged_on_a_volume_and_answers_healthz() {
    let dir = tempfile::tempdir().unwrap();
    let engine = match Engine::find(dir.path()) {
        Ok(engine) => engine,
        Err(why) => return eprintln!("skipped: the image is not built or run: {why}"),
    };
    let tag = format!("{}", std::process::id());
    let (build, runtime, image) = (
        format!("localhost/keypool-test-build:{tag}"),
        format!("localhost/keypool-test-runtime:{tag}"),
        format!("localhost/keypool-server-test:{tag}"),
    );
    let (container, volume) = (format!("keypool-test-{tag}"), format!("keypool-test-{tag}"));
    let _cleanup = Cleanup(vec![
        vec!["rm".into(), "-f".into(), container.clone()],
        vec!["volume".into(), "rm".into(), "-f".into(), volume.clone()],
        vec!["rmi".into(), "-f".into(), image.clone(), build.clone(), runtime.clone()],
    ]);
    // The runtime base: this machine's libraries (see `stage_runtime`).
    let base = dir.path().join("runtime");
    stage_runtime(&base.join("root"));
    std::fs::write(base.join("Containerfile"), "FROM scratch\nCOPY root/ /\n").unwrap();
    let built = run("podman", &["build", "-q", "-t", &runtime, base.to_str().unwrap()]).unwrap();
    assert!(built.status.success(), "the runtime base builds: {}", text(&built));
    // The build stage's output: the binary (the test's; the release build needs crates.io and
    // Rust's image) and the empty data directory.
    let stage = dir.path().join("build");
    std::fs::create_dir_all(stage.join("data")).unwrap();
    std::fs::copy(binary(), stage.join("keypool-server")).unwrap();
    std::fs::write(stage.join("Containerfile"), "FROM scratch\nCOPY keypool-server /keypool-server\nCOPY data /data\n")
        .unwrap();
    let built = run("podman", &["build", "-q", "-t", &build, stage.to_str().unwrap()]).unwrap();
    assert!(built.status.success(), "the build stage's stand-in builds: {}", text(&built));
    // The Dockerfile's runtime stage, as it is, after that build stage.
    let dockerfile = std::fs::read_to_string(deploy().join("Dockerfile")).unwrap();
    let arg =
        dockerfile.lines().find(|l| l.starts_with("ARG RUNTIME_IMAGE=")).expect("the runtime image is an argument");
    let runtime_stage = &dockerfile[dockerfile.find("FROM ${RUNTIME_IMAGE}").expect("a runtime stage")..];
    let containerfile = dir.path().join("Containerfile.test");
    std::fs::write(&containerfile, format!("{arg}\nFROM {build} AS build\n{runtime_stage}")).unwrap();
    let context = dir.path().join("context");
    std::fs::create_dir_all(&context).unwrap();
    let built = run(
        "podman",
        &[
            "build",
            "-q",
            "--format",
            "docker",
            "--build-arg",
            &format!("RUNTIME_IMAGE={runtime}"),
            "-f",
            containerfile.to_str().unwrap(),
            "-t",
            &image,
            context.to_str().unwrap(),
        ],
    )
    .unwrap();
    assert!(built.status.success(), "the Dockerfile's runtime stage builds: {}", text(&built));

    let config = dir.path().join("config.toml");
    std::fs::write(&config, "drain_seconds = 30\n").unwrap();
    let port = free_port();
    let mut args = vec!["run", "-d", "--name", &container];
    args.extend(engine.run.iter().copied());
    let published = format!("127.0.0.1:{port}:4141");
    let mounted = format!("{}:/etc/keypool-server/config.toml:ro", config.display());
    let data = format!("{volume}:/data");
    args.extend(["-p", &published, "-v", &mounted, "-v", &data, "--read-only", &image]);
    let started = run("podman", &args).unwrap();
    assert!(started.status.success(), "the image runs: {}", text(&started));

    let logs = || run("podman", &["logs", &container]).map(|o| text(&o)).unwrap_or_default();
    let url = format!("http://127.0.0.1:{port}/healthz");
    let client = client();
    let mut health = None;
    for _ in 0..3000 {
        if let Ok(answer) = client.get(&url).send().await {
            health = Some((answer.status().as_u16(), answer.text().await.unwrap()));
            break;
        }
        let state = run("podman", &["inspect", "--format", "{{.State.Running}}", &container]).unwrap();
        assert!(text(&state).contains("true"), "the container exited:\n{}", logs());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, body) = health.unwrap_or_else(|| panic!("/healthz never answered:\n{}", logs()));
    assert_eq!((status, body.as_str()), (200, "{\"status\":\"ok\",\"team\":\"off\"}"), "through the published port");
    let checked = run("podman", &["healthcheck", "run", &container]).unwrap();
    assert!(checked.status.success(), "the image's HEALTHCHECK (its own binary, no shell) passes: {}", text(&checked));

    let inspect =
        |format: &str| text(&run("podman", &["inspect", "--format", format, &container]).unwrap()).trim().to_owned();
    assert_eq!(inspect("{{.Config.User}}"), "65532:65532", "it runs as the unprivileged user");
    let pid = inspect("{{.State.Pid}}");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(uid.split_whitespace().skip(1).all(|id| id == "65532"), "the process is not root: {uid}");
    let mounts = inspect("{{range .Mounts}}{{.Destination}} {{.Type}};{{end}}");
    assert!(mounts.contains("/data volume"), "its data in a volume: {mounts}");

    let stopped = run("podman", &["stop", "-t", "60", &container]).unwrap();
    assert!(stopped.status.success(), "podman stops it: {}", text(&stopped));
    assert_eq!(inspect("{{.State.ExitCode}}"), "0", "the SIGTERM drains and it exits cleanly:\n{}", logs());
    assert!(logs().contains("drained: every request in flight ran to its end"), "it drained:\n{}", logs());
}
