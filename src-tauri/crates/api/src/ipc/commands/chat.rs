//! `chat:*` and `chat_send`.

use crate::ipc::*;
use crate::AppContext;

type Result<T> = std::result::Result<T, IpcError>;

pub fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<ChatDto>> {
    Ok(ctx.chats()?.list()?.into_iter().map(ChatDto::from).collect())
}

pub fn create(ctx: &AppContext, args: CreateChatArgs) -> Result<ChatDto> {
    let provider_id = args.provider_id.clone();
    Ok(ctx.chats()?.create(&provider_id, args.into())?.into())
}

pub fn update(ctx: &AppContext, args: UpdateChatArgs) -> Result<ChatDto> {
    let id = args.id.clone();
    Ok(ctx.chats()?.update(&id, args.into())?.into())
}

/// Stops a running reply and releases the chat's key.
pub fn delete(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedDto> {
    ctx.chats()?.delete(&id)?;
    Ok(DeletedDto { id })
}

pub fn close(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedDto> {
    ctx.chats()?.close(&id)?;
    Ok(DeletedDto { id })
}

pub fn messages(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<Vec<MessageDto>> {
    Ok(ctx.chats()?.messages(&chat_id)?.into_iter().map(MessageDto::from).collect())
}

pub fn stop(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<StoppedDto> {
    let stopped = ctx.chats()?.stop(&chat_id)?;
    Ok(StoppedDto { chat_id, stopped })
}

pub fn search(ctx: &AppContext, SearchChatsArgs { query }: SearchChatsArgs) -> Result<Vec<SearchResultDto>> {
    Ok(ctx.chats()?.search(&query)?.into_iter().map(SearchResultDto::from).collect())
}

pub async fn export_markdown(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<ExportResult> {
    Ok(ctx.chats()?.export_markdown(&chat_id).await?.into())
}

/// Sends a message (or edits the last one, or answers it again) and streams the reply's events;
/// `finished`, with the reply as saved, is always the last.
pub async fn send(ctx: &AppContext, args: SendArgs, emit: &mut (dyn FnMut(ChatEvent) + Send)) -> Result<MessageDto> {
    let chat_id = args.request.chat_id.clone();
    let reply = ctx.chats()?.send(&chat_id, args.request.turn(), &mut |progress| emit(progress.into())).await?;
    let message = MessageDto::from(reply);
    emit(ChatEvent::Finished { message: message.clone() });
    Ok(message)
}
