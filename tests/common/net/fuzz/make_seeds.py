#!/usr/bin/env python3
"""Writes the netlink fuzz targets' seed corpora (run once, as root; the output is committed).

rtnl/: RTM_NEWLINK (with IFLA_EXT_MASK = RTEXT_FILTER_VF), RTM_NEWADDR, RTM_NEWROUTE and
RTM_NEWQDISC replies captured from this machine's kernel, in a throw-away netns holding a veth
pair and a macvlan (and a VLAN and a bridge when the kernel has them) with IPv4 and IPv6
addresses and routes, and root TBFs of 1 Gbit/s and 400 Gbit/s (TCA_TBF_RATE64); plus an SR-IOV PF's
IFLA_VFINFO_LIST, which no virtual driver sends, built from the kernel's attribute layout
(include/uapi/linux/if_link.h). dcb/, pause/, rdma_nldev/ and ethtool_stats/ are built from the UAPI layouts
(dcbnl.h, ethtool_netlink.h, rdma_netlink.h, ethtool.h): no driver on this machine answers them.
Each file holds the payload after struct nlmsghdr, what the decoders take.
  make_seeds.py OUT_DIR
"""
import os
import socket
import struct
import subprocess
import sys

NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2


def attr(t, payload):
    data = struct.pack("=HH", 4 + len(payload), t) + payload
    return data + b"\0" * (-len(data) % 4)


def nest(t, *attrs):
    return attr(t | 0x8000, b"".join(attrs))


def dump(msg_type, family_hdr, extra=b""):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    body = family_hdr + extra
    s.send(struct.pack("=IHHII", 16 + len(body), msg_type, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    out = []
    while True:
        data = s.recv(1 << 20)
        off = 0
        while off < len(data):
            length, t, _, _, _ = struct.unpack_from("=IHHII", data, off)
            if t in (NLMSG_DONE, NLMSG_ERROR):
                return out
            out.append(data[off + 16 : off + length])
            off += (length + 3) & ~3


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def capture(out):
    ns = f"fuzzseed{os.getpid()}"
    sh = lambda *a: subprocess.run(["ip", "-n", ns, *a], check=True)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        sh("link", "add", "ens1f0", "type", "veth", "peer", "name", "peer0")
        sh("link", "add", "link", "ens1f0", "name", "mv0", "type", "macvlan", "mode", "bridge")
        # A bridge and a VLAN when the kernel has their modules.
        subprocess.run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"], check=False)
        subprocess.run(["ip", "-n", ns, "link", "add", "link", "ens1f0", "name", "ens1f0.100",
                        "type", "vlan", "id", "100"], check=False)
        sh("link", "set", "ens1f0", "mtu", "9000", "up")
        sh("link", "set", "mv0", "up")
        sh("addr", "add", "192.168.100.2/24", "dev", "ens1f0")
        sh("addr", "add", "fd00:100::2/64", "dev", "ens1f0", "nodad")
        sh("addr", "add", "10.56.217.4/16", "dev", "mv0")
        sh("route", "add", "10.99.0.0/16", "via", "192.168.100.1", "dev", "ens1f0")
        sh("route", "add", "default", "via", "192.168.100.1", "dev", "ens1f0", "table", "100")
        for dev, rate in (("ens1f0", "1gbit"), ("mv0", "400gbit")):
            subprocess.run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate",
                            rate, "burst", "64kb", "latency", "5ms"], check=True)
        subprocess.run(["ip", "netns", "exec", ns, sys.executable, __file__, "--dump", out],
                       check=True)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def dump_here(out):
    ifi = struct.pack("=BxHiII", 0, 0, 0, 0, 0)
    for i, m in enumerate(dump(18, ifi, attr(29, struct.pack("=I", 1)))):  # IFLA_EXT_MASK: VFs
        write(out, f"link-{i}", m)
    for i, m in enumerate(dump(22, struct.pack("=BBBBi", 0, 0, 0, 0, 0))):
        write(out, f"addr-{i}", m)
    for i, m in enumerate(dump(26, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0))):
        write(out, f"route-{i}", m)
    for i, m in enumerate(dump(38, struct.pack("=BxxxiIII", 0, 0, 0, 0, 0))):  # RTM_GETQDISC
        write(out, f"qdisc-{i}", m)


def vf_info(vf, mac, vlan, qos):
    return nest(
        1,  # IFLA_VF_INFO
        attr(1, struct.pack("=I", vf) + mac + b"\0" * (32 - len(mac))),  # IFLA_VF_MAC
        attr(2, struct.pack("=III", vf, vlan, qos)),  # IFLA_VF_VLAN
        nest(12, attr(1, struct.pack("=IIIH2x", vf, vlan, qos, 0x8100))),  # IFLA_VF_VLAN_LIST
        attr(6, struct.pack("=III", vf, 0, 0)),  # IFLA_VF_RATE
        attr(4, struct.pack("=II", vf, 0)),  # IFLA_VF_SPOOFCHK
        attr(5, struct.pack("=II", vf, 0)),  # IFLA_VF_LINK_STATE: auto
        attr(9, struct.pack("=II", vf, 0)),  # IFLA_VF_TRUST
        nest(8, *(attr(t, struct.pack("=Q", 1000 * (t + 1))) for t in range(6))),  # IFLA_VF_STATS
    )


def sriov_pf():
    ifi = struct.pack("=BxHiII", 0, 1, 7, 0x11043, 0)
    body = (
        attr(3, b"ens1f0np0\0")
        + attr(4, struct.pack("=I", 1500))
        + attr(1, bytes.fromhex("0c42a1000001"))
        + attr(16, b"\x06")  # IFLA_OPERSTATE: up
        + attr(21, struct.pack("=I", 2))  # IFLA_NUM_VF
        + attr(56, b"0000:81:00.0\0")  # IFLA_PARENT_DEV_NAME
        + nest(22, vf_info(0, bytes.fromhex("0c42a1000010"), 100, 3), vf_info(1, b"\0" * 6, 0, 0))
    )
    return ifi + body


def dcb(out):
    hdr = struct.pack("=BBH", 0, 20, 0)  # struct dcbmsg: AF_UNSPEC, DCB_CMD_IEEE_GET
    pfc = struct.pack("=BBBB", 8, 0x08, 0, 0) + b"\0" * 32 + b"\0" * 64  # struct ieee_pfc
    apps = nest(2, *(attr(0x102, struct.pack("=BBH", 5, 3, d)) for d in (24, 26)))  # APP table
    write(out, "ieee-pfc3-dscp", hdr + attr(1, b"\0") + nest(13, attr(2, pfc), apps))
    write(out, "ieee-pcp", hdr + nest(13, attr(2, pfc)))
    write(out, "no-ieee", hdr + attr(1, b"\0"))


def pause(out):
    header = nest(1, attr(1, struct.pack("=I", 4)), attr(2, b"ens1f0\0"))  # ETHTOOL_A_HEADER_*
    write(out, "rx-tx", header + attr(2, b"\0") + attr(3, b"\1") + attr(4, b"\1"))
    write(out, "off", header + attr(2, b"\1") + attr(3, b"\0") + attr(4, b"\0"))


def rdma(out):
    dev = attr(1, struct.pack("=I", 0)) + attr(2, b"mlx5_0\0")  # DEV_INDEX, DEV_NAME
    write(out, "dev", dev + attr(3, struct.pack("=I", 1)) + attr(4, b"16.35.2000\0"))
    port = dev + attr(3, struct.pack("=I", 1))  # PORT_INDEX
    # NDEV_INDEX, NDEV_NAME (50, 51; 80 and 81 are the hw counters' table and entry)
    write(out, "port", port + attr(50, struct.pack("=I", 4)) + attr(51, b"ens1f0np0\0"))
    write(out, "port-other-netns", port)
    write(out, "sys-shared", attr(66, b"\1"))  # RDMA_NLDEV_SYS_ATTR_NETNS_MODE
    write(out, "sys-exclusive", attr(66, b"\0"))
    # RDMA_NLDEV_CMD_STAT_GET's reply: STAT_HWCOUNTERS (80), a nest of HWCOUNTER_ENTRY (81)
    # nests, each a name (82) and a u64 value (83), as rxe and mlx5 answer.
    entry = lambda name, v: nest(81, attr(82, name + b"\0"), attr(83, struct.pack("=Q", v)))
    write(out, "stat", port + nest(80, entry(b"rcvd_pkts", 504), entry(b"sent_pkts", 6804),
                                   entry(b"duplicate_request", 2), entry(b"out_of_sequence", 0)))


def stats(out):
    names = [b"rx_packets", b"tx_packets", b"rx_prio3_pause", b"tx_prio3_pause"]
    for n, tag in ((4, "mlx5"), (2, "shrunk")):
        strings = struct.pack("=III", 0x1B, 1, n) + b"".join(x.ljust(32, b"\0") for x in names[:n])
        values = struct.pack("=II", 0x1D, n) + b"".join(struct.pack("=Q", 7 * i) for i in range(n))
        # The target's input: the asked count, the strings reply's length, then both replies.
        write(out, tag, struct.pack("=II", 4, len(strings)) + strings + values)


def main():
    if sys.argv[1] == "--dump":
        dump_here(sys.argv[2])
        return
    out = sys.argv[1]
    capture(os.path.join(out, "rtnl"))
    write(os.path.join(out, "rtnl"), "link-sriov-pf", sriov_pf())
    dcb(os.path.join(out, "dcb"))
    pause(os.path.join(out, "pause"))
    rdma(os.path.join(out, "rdma_nldev"))
    stats(os.path.join(out, "ethtool_stats"))


if __name__ == "__main__":
    main()
