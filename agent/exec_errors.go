package agent

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Nomad answers a refused exec (an unknown allocation, task or node, a
// node that cannot be reached) inside the WebSocket rather than with an
// HTTP status: the upgrade is accepted and the connection closed at once
// with the error's text, code 1011 for a fault of the servers and 1008
// otherwise. Its client returns that text as the error (`Unknown
// allocation "…"`), so answerClientError does the same for an exec
// request that asks to upgrade; any other request gets the HTTP answer.

// maxCloseText bounds a close frame's reason: a control frame's payload
// is at most 125 bytes, 2 of them the code.
const maxCloseText = 123

// answerClientError answers err for a client request: inside the
// WebSocket for an exec upgrade, as Nomad's; otherwise as an HTTP error.
func answerClientError(w http.ResponseWriter, r *http.Request, err error) {
	if !websocket.IsWebSocketUpgrade(r) || !strings.HasSuffix(r.URL.Path, "/exec") {
		writeClientError(w, err)
		return
	}
	conn, uerr := upgrader.Upgrade(w, r, nil)
	if uerr != nil {
		return // the upgrader answered the caller
	}
	defer conn.Close()
	code := websocket.ClosePolicyViolation
	var he *httpError
	if !errors.As(err, &he) || he.code >= 500 {
		code = websocket.CloseInternalServerErr
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, execErrorText(err)), time.Now().Add(time.Second))
}

// execErrorText is err's text as Nomad words it ("Unknown allocation"),
// cut to fit a close frame.
func execErrorText(err error) string {
	msg := strings.TrimSpace(err.Error())
	if rest, ok := strings.CutPrefix(msg, "unknown allocation "); ok {
		msg = "Unknown allocation " + rest
	}
	if len(msg) > maxCloseText {
		msg = msg[:maxCloseText]
	}
	return msg
}
