# Traffic tests: what "the fabric works" means for this pod, in numbers. fabctl's built-in verbs
# test runs them after apply (not in this build yet; `fabctl validate --static` checks that they
# are well-formed and refer to existing classes).

# Bandwidth: a ring over every NIC, RDMA WRITE of 1 MiB messages for 10 s on the RoCE class.
# 90 % of 400G line rate is what a healthy ConnectX-7 path reaches with 4 QPs; less means a
# mis-cabled rail, a link at the wrong speed, PFC pauses or ECMP collisions on the uplinks.
validate "ring-bandwidth" {
  pattern       = "ring"
  op            = "write"
  message_size  = "1MiB" # binary, 1048576 B, as perftest sizes go ("1MB" would be 10^6 B)
  duration      = "10s"
  qps           = 4 # the same 4 QPs per connection the hosts use (qp block)
  class         = "roce"
  min_bandwidth = "90%"
}

# Latency: small SENDs between every pair of nodes, which crosses both the one-hop (same rail,
# same leaf) and three-hop (leaf-spine-leaf) paths. A 400G cut-through hop adds well under a
# microsecond; p99 above 10 us means queueing, i.e. congestion or a pause storm somewhere.
validate "all-pairs-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "8B"
  iterations   = 10000
  class        = "roce"
  hosts        = ["gpu*"]
  max_p99      = "10us"
}
