# Server 2 of a three-server cluster on one machine. Start all three with
# ./run.sh start, or by hand:  bin/drover agent -config examples/cluster/server2.hcl
name       = "server2"
datacenter = "dc1"
data_dir   = "/tmp/drover-cluster/server2"
bind_addr  = "127.0.0.1"
log_level  = "INFO"

ports {
  http = 4656
  raft = 4657
}

server {
  enabled          = true
  bootstrap_expect = 3
  # HTTP addresses of the two other servers.
  retry_join = ["127.0.0.1:4646", "127.0.0.1:4666"]
  # The cluster's join secret, the same on every server: joins not signed
  # with it are refused. Generate your own (openssl rand -hex 32).
  join_token = "example-only-replace-me"
}
