# A client that runs allocations for the three-server cluster. It knows the
# HTTP address of every server and fails over between them. Its meta names
# its zone: client2.hcl and client3.hcl are the same in zones b and c, so
# that a job with an update block's zones block (examples/zones.hcl) rolls
# zone by zone.
name       = "client1"
datacenter = "dc1"
data_dir   = "/tmp/drover-cluster/client1"
bind_addr  = "127.0.0.1"
log_level  = "INFO"

ports {
  http = 4676
  raft = 4677
}

client {
  enabled = true
  servers = ["127.0.0.1:4646", "127.0.0.1:4656", "127.0.0.1:4666"]

  meta = {
    zone = "a"
  }
}

# raw_exec is off unless enabled (as Nomad's): the examples' jobs use it.
plugin "raw_exec" {
  config {
    enabled = true
  }
}
