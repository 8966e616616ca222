# Broken on purpose: a password written into the spec. Secrets must be
# references, env("NAME") or file("path"), read at run time.
fabric "pod1" {
  transport = "rocev2"
}

credentials "switches" {
  username = "admin"
  password = "hunter2" # expect: LOAD
}

credentials "hosts" {
  username    = "fabctl"
  private_key = file("/run/secrets/fabctl_ed25519")
}

switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "switches"
}
