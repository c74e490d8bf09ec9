package network

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
)

func TestConflistIsNomadsBridge(t *testing.T) {
	b, err := Conflist(BridgeConf{BridgeName: "nomad", Subnet: DefaultSubnet})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
	"cniVersion": "0.4.0",
	"name": "nomad",
	"plugins": [
		{
			"type": "loopback"
		},
		{
			"type": "bridge",
			"bridge": "nomad",
			"ipMasq": true,
			"isGateway": true,
			"forceAddress": true,
			"hairpinMode": false,
			"ipam": {
				"type": "host-local",
				"ranges": [
					[
						{
							"subnet": "172.26.64.0/20"
						}
					]
				],
				"routes": [
					{
						"dst": "0.0.0.0/0"
					}
				],
				"dataDir": "/var/run/cni"
			}
		},
		{
			"backend": "iptables",
			"iptablesAdminChainName": "NOMAD-ADMIN",
			"type": "firewall"
		},
		{
			"capabilities": {
				"portMappings": true
			},
			"snat": true,
			"type": "portmap"
		}
	]
}`
	if string(b) != want {
		t.Fatalf("conflist:\n%s\nwant:\n%s", b, want)
	}
	list, err := libcni.NetworkConfFromBytes(b)
	if err != nil {
		t.Fatalf("libcni rejects the conflist: %v", err)
	}
	var types []string
	for _, p := range list.Plugins {
		types = append(types, p.Network.Type)
	}
	if got := strings.Join(types, ","); got != "loopback,bridge,firewall,portmap" {
		t.Fatalf("plugins %s", got)
	}
}

func TestConflistCarriesConfig(t *testing.T) {
	b, err := Conflist(BridgeConf{BridgeName: "br-test", Subnet: "10.99.0.0/24", HairpinMode: true})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Plugins []struct {
			Bridge      string
			HairpinMode bool
			IPAM        struct {
				Ranges [][]struct{ Subnet string }
			}
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	br := v.Plugins[1]
	if br.Bridge != "br-test" || !br.HairpinMode || br.IPAM.Ranges[0][0].Subnet != "10.99.0.0/24" {
		t.Fatalf("bridge plugin %+v", br)
	}
}

func TestConflistRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		b    BridgeConf
		want string
	}{
		{BridgeConf{BridgeName: "", Subnet: DefaultSubnet}, "bridge_network_name"},
		{BridgeConf{BridgeName: "a-name-far-too-long", Subnet: DefaultSubnet}, "bridge_network_name"},
		{BridgeConf{BridgeName: "a/b", Subnet: DefaultSubnet}, "bridge_network_name"},
		{BridgeConf{BridgeName: "nomad", Subnet: "172.26.64.0"}, "bridge_network_subnet"},
		{BridgeConf{BridgeName: "nomad", Subnet: "fd00::/64"}, "bridge_network_subnet"},
		{BridgeConf{BridgeName: "nomad", Subnet: "10.0.0.0/31"}, "bridge_network_subnet"},
	} {
		if _, err := Conflist(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.b, err, tc.want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	got := SplitPath(" /opt/cni/bin::/usr/lib/cni ")
	if strings.Join(got, "|") != "/opt/cni/bin|/usr/lib/cni" {
		t.Fatalf("%q", got)
	}
	if d := (Config{}).withDefaults(); strings.Join(d.CNIPath, ":") != DefaultCNIPath || d.BridgeName != "nomad" || d.Subnet != DefaultSubnet || d.ConfigDir != "/opt/cni/config" {
		t.Fatalf("defaults %+v", d)
	}
}
