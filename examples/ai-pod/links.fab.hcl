# Cabling, generated. Every link is "switch:port" <-> "host:nic" or "switch:port" <-> "switch:port";
# a port or NIC takes one cable, and fabctl refuses a spec that uses one twice.

locals {
  # Rail r lands on leaf r / 2: leaf1 carries rails 0-1, leaf2 rails 2-3, and so on.
  rail_leaf = [for r in range(local.rails) : local.leaf_names[floor(r / 2)]]

  # Host side. Node n takes cage n+1 on each leaf; the cage's two 400G halves go to that node's
  # two rails on the leaf (one twin-port 2 x DR4 optic, two fibres, one server per cage).
  host_links = merge([
    for host, n in local.gpu_nodes : {
      for r in range(local.rails) : "${host}:rdma${r}" => {
        host = host
        nic  = "rdma${r}"
        leaf = local.rail_leaf[r]
        port = local.port_names[local.leaves[local.rail_leaf[r]].platform][n * 2 + r % 2]
      }
    }
  ]...)

  # Uplinks. Leaf cages 33-64 (port index 64..127) go up, two per node so the leaf stays 1:1.
  # The halves of each uplink cage go to different spines (j % 2): losing an optic costs one
  # link to each spine instead of two to one. Spine s takes leaf L's links on its ports
  # L*32 .. L*32+31 (cages 16L+1 .. 16L+16).
  uplinks_per_leaf = 2 * var.gpu_nodes
  uplinks = merge([
    for leaf, lf in local.leaves : {
      for j in range(local.uplinks_per_leaf) : "${leaf}:up${j}" => {
        leaf       = leaf
        leaf_port  = local.port_names[lf.platform][64 + j]
        spine      = local.spine_names[j % 2]
        spine_port = local.port_names["srlinux"][lf.index * 32 + floor(j / 2)]
      }
    }
  ]...)
}

# 32 nodes x 8 rails = 256 links, 64 per leaf.
link {
  for_each  = local.host_links
  endpoints = ["${each.value.leaf}:${each.value.port}", "${each.value.host}:${each.value.nic}"]
  speed     = "400G"
  # From the GPU racks to the network rack in the middle of the row; the longest run is what
  # counts for PFC headroom, so state the real length of each run if they differ much.
  cable_length = "15m"
}

# 4 leaves x 64 = 256 links, 128 per spine.
link {
  for_each     = local.uplinks
  endpoints    = ["${each.value.leaf}:${each.value.leaf_port}", "${each.value.spine}:${each.value.spine_port}"]
  speed        = "400G"
  cable_length = "30m" # leaf rack to spine rack, same row
}
