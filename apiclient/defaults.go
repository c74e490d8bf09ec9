package apiclient

import "net/url"

// SetNamespace makes every request of c that names no namespace carry
// ?namespace=ns, as Nomad's client does with its configured namespace;
// "" names none (the agent's default, "default").
func (c *Client) SetNamespace(ns string) { c.namespace = ns }

// Namespace returns the namespace SetNamespace set.
func (c *Client) Namespace() string { return c.namespace }

// SetRegion makes every request of c that names no region carry
// ?region=region, as Nomad's client does.
func (c *Client) SetRegion(region string) { c.region = region }

// withDefaults returns q with the client's namespace and region added
// where q names none; q itself is left alone.
func (c *Client) withDefaults(q url.Values) url.Values {
	if (c.namespace == "" || q.Get("namespace") != "") && (c.region == "" || q.Get("region") != "") {
		return q
	}
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	if c.namespace != "" && out.Get("namespace") == "" {
		out.Set("namespace", c.namespace)
	}
	if c.region != "" && out.Get("region") == "" {
		out.Set("region", c.region)
	}
	return out
}
