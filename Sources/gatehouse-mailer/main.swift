import IssuerComposition
import MailSending

// The mail sender: delivers the outbox's messages (SMTP, or the drop
// directory without GATEHOUSE_SMTP_URL). One per node; Scripts/run's
// supervisor and gatehouse-mailer.service keep it running.
MailerProcess.run { config in try IssuerComposition.open(config).storage }
