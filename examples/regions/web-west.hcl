# A job of region west: `drover job run` through east's address registers
# and runs it in west.
job "web-west" {
  region      = "west"
  datacenters = ["dc1"]

  group "web" {
    count = 1

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo serving in west; exec sleep 3600"]
      }
    }
  }
}
