# Broken on purpose: an HCL syntax error. fabctl validate reports it with
# file:line and a snippet, and stops before decoding anything.
fabric "pod1" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = = "192.0.2.1" # expect: LOAD
}
