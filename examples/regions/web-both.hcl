# A multi-region job: `drover job run` through either region's address
# registers it in east (one instance) and west (two), at one version in
# both; east rolls a new version out first, then west.
job "web-both" {
  datacenters = ["dc1"]

  multiregion {
    strategy {
      max_parallel = 1
      on_failure   = "fail_all"
    }

    region "east" {
      count = 1
      meta {
        tier = "first"
      }
    }

    region "west" {
      count = 2
    }
  }

  group "web" {
    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo serving in ${NOMAD_REGION}; exec sleep 3600"]
      }
    }
  }
}
