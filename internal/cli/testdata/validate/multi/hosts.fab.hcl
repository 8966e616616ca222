host "h1" {
  connect = "local"
  nic "eth1" {
    device = "rxe0"
    model  = "rxe"
  }
}

link {
  endpoints = ["leaf1:ethernet-1/1", "h1:eth1"]
  speed     = "25G"
}
