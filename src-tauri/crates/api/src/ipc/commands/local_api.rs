//! `localApi:*`: the local OpenAI- and Anthropic-compatible endpoint.

use crate::ipc::*;
use crate::AppContext;

pub fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<LocalApiStatusDto, IpcError> {
    Ok(ctx.local_api()?.status()?.into())
}

pub async fn configure(ctx: &AppContext, args: ConfigureLocalApiArgs) -> Result<LocalApiConfiguredDto, IpcError> {
    let (status, token) = ctx.local_api()?.configure(args.enabled, args.port).await?;
    Ok(LocalApiConfiguredDto { status: status.into(), token })
}

pub fn regenerate_token(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<LocalApiTokenDto, IpcError> {
    Ok(LocalApiTokenDto { token: ctx.local_api()?.regenerate_token()? })
}
