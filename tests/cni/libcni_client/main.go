// libcni_client: a minimal CNI runtime over Debian's libcni (the library containerd, CRI-O and
// Multus use), so integration tests drive rdmanet exactly as a real runtime would.
//
//	libcni_client <add|check|del|cached|validate> CONF CONTAINER_ID NETNS IFNAME CACHE_DIR
//
// CONF is a .conflist or a single .conf; CNI_PATH names the plugin directories. Results print
// as JSON on stdout; failures print {"error": "..."} and exit 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

func fail(err error) {
	out, _ := json.Marshal(map[string]string{"error": err.Error()})
	fmt.Println(string(out))
	os.Exit(1)
}

func load(path string) (*libcni.NetworkConfigList, error) {
	if strings.HasSuffix(path, ".conflist") {
		return libcni.ConfListFromFile(path)
	}
	conf, err := libcni.ConfFromFile(path)
	if err != nil {
		return nil, err
	}
	return libcni.ConfListFromConf(conf)
}

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: libcni_client OP CONF CONTAINER_ID NETNS IFNAME CACHE_DIR")
		os.Exit(2)
	}
	op, confPath, id, netns, ifname, cacheDir := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]
	list, err := load(confPath)
	if err != nil {
		fail(err)
	}
	cni := libcni.NewCNIConfigWithCacheDir(filepath.SplitList(os.Getenv("CNI_PATH")), cacheDir, nil)
	rt := &libcni.RuntimeConf{
		ContainerID: id,
		NetNS:       netns,
		IfName:      ifname,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", "default"},
			{"K8S_POD_NAME", "pod-" + id},
			{"K8S_POD_INFRA_CONTAINER_ID", id},
			{"K8S_POD_UID", "uid-" + id},
		},
	}
	ctx := context.Background()
	var out interface{} = map[string]string{}
	switch op {
	case "add":
		res, err := cni.AddNetworkList(ctx, list, rt)
		if err != nil {
			fail(err)
		}
		out = res
	case "check":
		if err := cni.CheckNetworkList(ctx, list, rt); err != nil {
			fail(err)
		}
	case "del":
		if err := cni.DelNetworkList(ctx, list, rt); err != nil {
			fail(err)
		}
	case "cached":
		res, err := cni.GetNetworkListCachedResult(list, rt)
		if err != nil {
			fail(err)
		}
		if res != nil {
			out = res
		}
	case "validate":
		caps, err := cni.ValidateNetworkList(ctx, list)
		if err != nil {
			fail(err)
		}
		out = caps
	default:
		fail(fmt.Errorf("unknown op %q", op))
	}
	b, err := json.Marshal(out)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(b))
}
