# Client 2 of the three-server cluster: client1.hcl's twin in zone b
# (client1.hcl is in zone a, client3.hcl in zone c), with its own name,
# data_dir and ports.
name       = "client2"
datacenter = "dc1"
data_dir   = "/tmp/drover-cluster/client2"
bind_addr  = "127.0.0.1"
log_level  = "INFO"

ports {
  http = 4686
  raft = 4687
}

client {
  enabled = true
  servers = ["127.0.0.1:4646", "127.0.0.1:4656", "127.0.0.1:4666"]

  meta = {
    zone = "b"
  }
}

# raw_exec is off unless enabled (as Nomad's): the examples' jobs use it.
plugin "raw_exec" {
  config {
    enabled = true
  }
}
