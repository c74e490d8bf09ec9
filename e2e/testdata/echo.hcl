# One task that says hello on stdout, then waits.
job "echo" {
  type = "service"

  group "echo" {
    count = 1

    task "echo" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello from drover; exec sleep 120"]
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
