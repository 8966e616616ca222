# Switches: four leaves, one per CLI-driven NOS, and two SR Linux spines driven over gNMI.
#
# One NOS per leaf is deliberate: dual/multi-vendor pods exist (supply, risk), and the point of
# fabctl is that one intent - the classes in fabric.fab.hcl - renders consistently on each. A
# single-vendor pod is the same spec with the platform column made uniform.
#
# All six are 51.2T switches with 64 x 800G OSFP cages run as 128 x 400G.
#
# Ports are not declared: every port a link names is implied, and takes its speed from the
# link. Declare port blocks only to override something per port (MTU, PFC, description).

locals {
  leaves = {
    # index L: the leaf carries rails 2L and 2L+1 and lands on spine ports L*32 .. L*32+31.
    # mgmt: host number in switch_mgmt_prefix. cell_size: buffer cell, null where not published.
    # model: as show version prints it, where the platform renders by chip family (EOS: the
    # transmit-queue keyword, uc-tx-queue on this Tomahawk 5); null elsewhere.
    leaf1 = { platform = "sonic", index = 0, mgmt = 11, cell_size = "254B", model = null }              # e.g. Dell Z9864F-ON (Tomahawk 5)
    leaf2 = { platform = "cumulus", index = 1, mgmt = 12, cell_size = null, model = null }              # NVIDIA SN5600 (Spectrum-4)
    leaf3 = { platform = "eos", index = 2, mgmt = 13, cell_size = "254B", model = "DCS-7060X6-64PE-F" } # Arista 7060X6-64PE (Tomahawk 5)
    leaf4 = { platform = "nxos", index = 3, mgmt = 14, cell_size = null, model = null }                 # Cisco N9364E-SG2 (Silicon One G200)
  }

  spines = {
    spine1 = { index = 0, mgmt = 21 } # Nokia 7220 IXR-H5-64D (Tomahawk 5)
    spine2 = { index = 1, mgmt = 22 }
  }

  leaf_names  = sort(keys(local.leaves))
  spine_names = sort(keys(local.spines))
}

switch "leaf" {
  for_each = local.leaves
  name     = each.key # instance names leaf1..leaf4 rather than the default "leaf-<key>"

  platform = each.value.platform
  model    = each.value.model
  # SSH CLI is every one of these platforms' default driver (driver = "ssh"); gNMI would need
  # native paths for PFC on each, which only SR Linux has here.
  address     = cidrhost(var.switch_mgmt_prefix, each.value.mgmt)
  credentials = "switch-ssh"
  role        = "leaf" # tier 1; the default role, written for the reader

  # Buffer facts used by the headroom lint rules (BUF-1, BUF-2). These are planning figures for
  # a 51.2T shallow-buffer ASIC; take the real numbers from your datasheet or the NOS
  # (`show buffer` / `mmuconfig -l` / `nv show qos buffer`) before trusting the result.
  #
  #   headroom: per lossless priority group per port. The 802.1Qbb delay model at 400G with the
  #   longest cable on a leaf (30 m uplink) and a 9 KB MTU needs about 200 KB (2 x max frame,
  #   PAUSE frame, interface and peer response delay, 2 x cable delay); rounded up to 256 KB.
  #   Total headroom: 128 ports x 1 lossless PG x 256 KB = 32.8 MB, well inside total - reserved.
  #
  #   xoff / queue_limit are left out on purpose: these ASICs use dynamic thresholds (alpha x
  #   free shared buffer), so there is no fixed pause point to check ECN against. Set them if
  #   your NOS runs static thresholds.
  buffer {
    total     = "160MB"
    reserved  = "64MB" # shared-pool floor for lossy traffic that headroom may not take
    headroom  = "256KB"
    cell_size = each.value.cell_size # Broadcom MMU cells are 254 B; null = unknown, not set
  }
}

switch "spine" {
  for_each = local.spines
  name     = each.key

  # SR Linux, not plain "openconfig": OpenConfig QoS has no PFC, PFC-watchdog or headroom
  # leaves, and a spine needs all three. SR Linux's native YANG (srl_nokia-qos) has them.
  platform    = "srlinux"
  address     = "${cidrhost(var.switch_mgmt_prefix, each.value.mgmt)}:57400" # gNMI port
  credentials = "switch-gnmi"
  role        = "spine" # tier 2: lint checks that lossless traffic only goes up then down

  buffer {
    total     = "160MB"
    reserved  = "64MB"
    headroom  = "256KB" # every spine port is a 30 m leaf uplink: same sizing as the leaves
    cell_size = "254B"
  }
}
