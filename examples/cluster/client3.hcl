# Client 3 of the three-server cluster: client1.hcl's twin in zone c
# (client1.hcl is in zone a, client2.hcl in zone b), with its own name,
# data_dir and ports.
name       = "client3"
datacenter = "dc1"
data_dir   = "/tmp/drover-cluster/client3"
bind_addr  = "127.0.0.1"
log_level  = "INFO"

ports {
  http = 4696
  raft = 4697
}

client {
  enabled = true
  servers = ["127.0.0.1:4646", "127.0.0.1:4656", "127.0.0.1:4666"]

  meta = {
    zone = "c"
  }
}

# raw_exec is off unless enabled (as Nomad's): the examples' jobs use it.
plugin "raw_exec" {
  config {
    enabled = true
  }
}
