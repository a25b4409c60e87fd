package host

import "fmt"

// A NotSentError is the error of a tool call that an [Approver] did not
// send to the server: its policy denied the call, or asked about it and
// the person declined, or there was no one to ask.
type NotSentError struct {
	// Tool is the tool that was called.
	Tool string
	// Action is the policy's: Deny, or Ask.
	Action Action
	// Asked reports, when the policy asks, whether a person was asked and
	// declined; false means there was no one to ask (no ConfirmFunc).
	Asked bool
	// Reason says in a few words why the policy decided so, such as "it
	// is destructive".
	Reason string
}

// Error names the tool, and says why the call was not sent.
func (e *NotSentError) Error() string {
	switch {
	case e.Action != Ask:
		return fmt.Sprintf("mcpeffect: call to tool %q not sent: the policy denies it: %s", e.Tool, e.Reason)
	case e.Asked:
		return fmt.Sprintf("mcpeffect: call to tool %q not sent: declined when asked (%s)", e.Tool, e.Reason)
	}
	return fmt.Sprintf("mcpeffect: call to tool %q not sent: the policy asks about it (%s), and there is no one to ask", e.Tool, e.Reason)
}
