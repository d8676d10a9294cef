//! A throw-away PostgreSQL cluster of a test's own, for what must not be done to the
//! suite's shared server: restarting it, refusing passwords. `initdb` into a temporary
//! directory, `pg_ctl start` on 127.0.0.1 and a free port (socket in that directory),
//! as user `postgres` through `runuser` when the test runs as root.
//!
//! The binaries are found like `.ci/run` finds them: `KFIN_TEST_PG_BIN`, else the
//! newest `/usr/lib/postgresql/*/bin`, else `pg_config --bindir`. Without them a test is
//! skipped with a loud message, except in CI (`CI=true`), where it fails.
//!
//! The cluster stops when dropped; a watchdog stops it after `LIFETIME` in any case (a
//! test killed half-way leaves nothing running).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIFETIME: Duration = Duration::from_secs(900);

pub struct Cluster {
    pub dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    as_postgres: bool,
    /// The superuser's password when host connections need one (`scram-sha-256`).
    pub password: Option<String>,
}

fn pg_bin() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("KFIN_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Some(bin);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    bin.join("initdb").exists().then_some(bin)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

impl Cluster {
    /// Starts a cluster, or `None` (locally) when PostgreSQL's binaries are not there;
    /// `what` names the test that did not run. With `password`, TCP connections must
    /// authenticate (`scram-sha-256`) and the superuser `postgres` has that password.
    pub fn start(what: &str, password: Option<&str>) -> Option<Cluster> {
        let Some(bin) = pg_bin() else {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("PostgreSQL's initdb is required in CI for {what} (install postgresql)");
            }
            eprintln!("\n*** SKIPPED: no PostgreSQL binaries (initdb) found; {what} did not run. Install postgresql or set KFIN_TEST_PG_BIN. ***\n");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("kfin-pg-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("cluster directory");
        let as_postgres = is_root();
        if as_postgres {
            let status = Command::new("chown").args(["-R", "postgres:"]).arg(&dir).status().expect("chown");
            assert!(status.success(), "chown the cluster directory to postgres");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cluster = Cluster { dir, port, bin, as_postgres, password: password.map(str::to_string) };
        let mut initdb = vec![
            "-D".to_string(),
            cluster.data().display().to_string(),
            "-U".into(),
            "postgres".into(),
            "--encoding=UTF8".into(),
            "--no-locale".into(),
            "--auth-local=trust".into(),
        ];
        match password {
            Some(pw) => {
                let file = cluster.dir.join("pwfile");
                std::fs::write(&file, pw).unwrap();
                cluster.give_to_postgres(&file);
                initdb.push("--auth-host=scram-sha-256".into());
                initdb.push(format!("--pwfile={}", file.display()));
            }
            None => initdb.push("--auth-host=trust".into()),
        }
        let out = cluster.run("initdb", &initdb);
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            cluster.port,
            cluster.dir.display()
        );
        let log = cluster.dir.join("server.log").display().to_string();
        let data = cluster.data().display().to_string();
        let out = cluster
            .run("pg_ctl", &["-D", &data, "-l", &log, "-w", "-t", "60", "-o", &options, "start"].map(String::from));
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        cluster.watchdog();
        Some(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn give_to_postgres(&self, path: &Path) {
        if self.as_postgres {
            let _ = Command::new("chown").arg("postgres:").arg(path).status();
        }
    }

    fn run(&self, tool: &str, args: &[String]) -> std::process::Output {
        let program = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command.args(args).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("run {tool}: {e}"))
    }

    /// Stops the cluster after `LIFETIME` even if the test never drops it.
    fn watchdog(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = if self.as_postgres {
            format!("runuser -u postgres -- {} -D {} -m immediate stop", pg_ctl.display(), self.data().display())
        } else {
            format!("{} -D {} -m immediate stop", pg_ctl.display(), self.data().display())
        };
        let script = format!(
            "sleep {}; [ -d {} ] && {stop}; rm -rf {}",
            LIFETIME.as_secs(),
            self.dir.display(),
            self.dir.display()
        );
        let _ = Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    /// `postgres://postgres[:password]@127.0.0.1:PORT/DB`
    pub fn url(&self, db: &str) -> String {
        match &self.password {
            Some(pw) => format!("postgres://postgres:{pw}@127.0.0.1:{}/{db}", self.port),
            None => format!("postgres://postgres@127.0.0.1:{}/{db}", self.port),
        }
    }

    /// `pg_ctl restart -m fast`: every connection is closed, in-flight transactions roll
    /// back; returns once the server accepts connections again.
    pub fn restart(&self) -> Duration {
        let started = Instant::now();
        let data = self.data().display().to_string();
        let log = self.dir.join("server.log").display().to_string();
        let out =
            self.run("pg_ctl", &["-D", &data, "-l", &log, "-w", "-t", "60", "-m", "fast", "restart"].map(String::from));
        assert!(out.status.success(), "pg_ctl restart failed: {}", String::from_utf8_lossy(&out.stderr));
        started.elapsed()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data().display().to_string();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"].map(String::from));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
