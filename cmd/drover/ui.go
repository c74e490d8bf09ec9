package main

import (
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func init() { registerCommand("ui", newUICommand) }

// uiPages maps a search context to the web UI's page of one of its
// objects, in the order matches are listed; "" has no page of its own.
var uiPages = []struct{ context, kind, page string }{
	{"jobs", "Jobs", "/ui/jobs/"},
	{"deployment", "Deployments", "/ui/deployments/"},
	{"allocs", "Allocations", "/ui/allocations/"},
	{"nodes", "Nodes", ""},
	{"evals", "Evaluations", ""},
}

// openBrowser starts the desktop's browser on a URL (tests replace it).
var openBrowser = func(u string) error {
	for _, name := range []string{"xdg-open", "open"} {
		if p, err := exec.LookPath(name); err == nil {
			cmd := exec.Command(p, u)
			if err := cmd.Start(); err != nil {
				return err
			}
			go func() { _ = cmd.Wait() }()
			return nil
		}
	}
	return errors.New("found neither xdg-open nor open to start a browser with")
}

func newUICommand() *cobra.Command {
	var address string
	var showURL bool
	cmd := &cobra.Command{
		Use:   "ui [flags] [ID]",
		Short: "Open the web UI in the default browser: the jobs list, or the page of what an ID names",
		Long: `Opens the agent's web UI (website/ui.md) in the default browser, as Nomad's
ui command: the jobs list, or with an ID, a unique prefix of one or a job
name, the page of the job, deployment or allocation it names (a node opens
the node list). -show-url prints the URL instead. With ACLs on, the UI asks
for a token on its own page (Nomad's -authenticate is not supported).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			path := "/ui/jobs"
			if len(args) == 1 {
				if path, err = uiPathOf(cmd, c, args[0]); err != nil {
					return err
				}
			}
			u := strings.TrimSuffix(c.Address(), "/") + path
			w := cmd.OutOrStdout()
			if showURL {
				fmt.Fprintf(w, "URL for web UI: %s\n", u)
				return nil
			}
			fmt.Fprintf(w, "Opening URL %q\n", u)
			if err := openBrowser(u); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error opening the URL: %v; open it by hand", err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&showURL, "show-url", false, "print the URL instead of opening it")
	return cmd
}

// uiPathOf finds what prefix names with the search API and returns the
// path of its page.
func uiPathOf(cmd *cobra.Command, c *apiclient.Client, prefix string) (string, error) {
	var resp struct {
		Matches     map[string][]string
		Truncations map[string]bool
	}
	body := map[string]string{"Prefix": prefix, "Context": "all"}
	if _, err := c.Put(cmd.Context(), "/v1/search", body, &resp); err != nil {
		return "", &exitError{code: 1, msg: fmt.Sprintf("Error querying search with id: %v", err)}
	}
	// A job named exactly so wins, as IDs of other objects are UUIDs.
	for _, id := range resp.Matches["jobs"] {
		if id == prefix {
			return "/ui/jobs/" + url.PathEscape(id), nil
		}
	}
	var found []string
	var only struct{ context, page, id string }
	for _, p := range uiPages {
		for _, id := range resp.Matches[p.context] {
			found = append(found, id)
			only.context, only.page, only.id = p.context, p.page, id
		}
	}
	switch {
	case len(found) == 0:
		return "", &exitError{code: 1, msg: fmt.Sprintf("No matches found for %q", prefix)}
	case len(found) == 1 && only.context == "nodes":
		return "/ui/nodes", nil
	case len(found) == 1 && only.page == "":
		return "", &exitError{code: 1, msg: fmt.Sprintf("The web UI has no page for evaluations: drover eval status %s", only.id)}
	case len(found) == 1:
		return only.page + url.PathEscape(only.id), nil
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Prefix matched multiple objects\n")
	for _, p := range uiPages {
		ids := resp.Matches[p.context]
		if len(ids) == 0 {
			continue
		}
		sort.Strings(ids)
		fmt.Fprintf(w, "\n%s\n", p.kind)
		for _, id := range ids {
			fmt.Fprintln(w, id)
		}
		if resp.Truncations[p.context] {
			fmt.Fprintln(w, "(more not shown)")
		}
	}
	return "", exitCode(1)
}

// addUIFlag adds Nomad's -ui to cmd: once the command has printed what it
// prints, the web UI opens at the page of what it showed (uiAfter).
func addUIFlag(cmd *cobra.Command, what string) {
	cmd.Flags().Bool("ui", false, "then open the web UI at the "+what+"'s page")
}

// uiAfter opens the web UI at path when cmd was given -ui, as Nomad's
// commands do after their output; a browser that cannot be started is
// an error naming the URL to open by hand.
func uiAfter(cmd *cobra.Command, c *apiclient.Client, path string) error {
	if on, _ := cmd.Flags().GetBool("ui"); !on {
		return nil
	}
	u := strings.TrimSuffix(c.Address(), "/") + path
	if ns := c.Namespace(); ns != "" && strings.HasPrefix(path, "/ui/jobs/") {
		u += "?namespace=" + url.QueryEscape(ns)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nOpening URL %q\n", u)
	if err := openBrowser(u); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error opening the URL: %v; open it by hand", err)}
	}
	return nil
}
