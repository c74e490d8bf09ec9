# java.hcl — a jar fetched as an artifact and run by the java driver, in exec's isolation.
#
# Each allocation downloads the jar into its local/ directory, then runs it
# in a JVM as nobody, in a root of its own built from the host's /bin,
# /etc, /lib*, /sbin and /usr (read-only, which holds the JVM), with PID,
# IPC and mount namespaces, in a cgroup of 256 MB. The client must run as
# root with cgroups and have a JVM (Debian's default-jre-headless), which it
# reports as driver.java.version (website/drivers/java.md). The jar here is
# the java driver's test program, which prints who and where it runs and
# sleeps until stopped, served from this repository:
#
#   python3 -m http.server -b 127.0.0.1 -d drivers/java/testdata 8000 &
#   drover job run examples/java.hcl
#   drover alloc logs <ALLOC> hello
#   drover alloc exec <ALLOC> /bin/sh -c 'id; ls /local'
#   drover job run -var version=2 examples/java.hcl
variable "version" {
  type    = string
  default = "1"
}

variable "jar_url" {
  type    = string
  default = "http://127.0.0.1:8000/hello.jar"
}

job "java-hello" {
  update {
    max_parallel     = 1
    min_healthy_time = "2s"
    healthy_deadline = "1m"
  }

  group "hello" {
    count = 2

    task "hello" {
      driver = "java"

      artifact {
        source = var.jar_url
      }

      config {
        jar_path    = "local/hello.jar"
        jvm_options = ["-Xmx64m", "-Dversion=${var.version}"]
        args        = ["version", var.version, "sleep", "86400"]
      }

      # The JVM runs its shutdown hooks on kill_signal (SIGTERM).
      kill_timeout = "10s"

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}
