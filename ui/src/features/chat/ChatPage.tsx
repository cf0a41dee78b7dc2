/** The chat page. Conversations arrive with the chat feature; this is its frame. */
export function ChatPage() {
  return (
    <section className="chat" aria-labelledby="chat-title" data-testid="chat-page">
      <header className="page__header">
        <h1 id="chat-title">Chat</h1>
      </header>
      <div className="empty-state">
        <h2>No conversations yet</h2>
        <p>Add API keys in Settings → Providers, then start a chat. Keypool picks a key from the pool for each chat and keeps the chat on it.</p>
      </div>
    </section>
  );
}
