# Region west of examples/regions: one server and a client in one agent.
# Its ACL policies and global tokens would replicate from east (with
# acl { enabled = true, replication_token = "<east's management token>" }).
name      = "west-1"
region    = "west"
data_dir  = "/tmp/drover-regions/west"
bind_addr = "127.0.0.1"

ports {
  http = 4756
  raft = 4757
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
