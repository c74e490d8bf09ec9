# Region east of examples/regions: one server and a client in one agent,
# authoritative for ACLs. run.sh starts it with west and joins the two.
name      = "east-1"
region    = "east"
data_dir  = "/tmp/drover-regions/east"
bind_addr = "127.0.0.1"

ports {
  http = 4746
  raft = 4747
}

server {
  enabled              = true
  bootstrap_expect     = 1
  join_token           = "regions-example-join-token"
  authoritative_region = "east"
}

client {
  enabled = true
}

# raw_exec is off unless enabled (as Nomad's): web-west.hcl uses it.
plugin "raw_exec" {
  config {
    enabled = true
  }
}
