# Server 3 of a three-server cluster on one machine. Start all three with
# ./run.sh start, or by hand:  bin/drover agent -config examples/cluster/server3.hcl
name       = "server3"
datacenter = "dc1"
data_dir   = "/tmp/drover-cluster/server3"
bind_addr  = "127.0.0.1"
log_level  = "INFO"

ports {
  http = 4666
  raft = 4667
}

server {
  enabled          = true
  bootstrap_expect = 3
  # HTTP addresses of the two other servers.
  retry_join = ["127.0.0.1:4646", "127.0.0.1:4656"]
  # The cluster's join secret, the same on every server: joins not signed
  # with it are refused. Generate your own (openssl rand -hex 32).
  join_token = "example-only-replace-me"
}
