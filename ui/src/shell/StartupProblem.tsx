interface Props {
  title: string;
  message: string;
  path?: string;
  logDir?: string;
}

/** Shown instead of the app when it cannot start safely. Nothing was changed on disk. */
export function StartupProblem({ title, message, path, logDir }: Props) {
  return (
    <main className="startup-problem" role="alert" data-testid="startup-problem">
      <h1>{title}</h1>
      <p className="startup-problem__message">{message}</p>
      {path && (
        <p>
          Database file: <code>{path}</code>
        </p>
      )}
      <p>
        Your file was not modified or replaced. Move it aside (or restore a backup) and restart Keypool to begin
        with a new database, or install the Keypool version that created it.
      </p>
      {logDir && (
        <p className="muted">
          Details are in the log: <code>{logDir}</code>
        </p>
      )}
    </main>
  );
}
