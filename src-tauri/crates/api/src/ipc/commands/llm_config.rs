//! `llmConfig:*`: providers and their API key pools.

use crate::ipc::*;
use crate::AppContext;

type Result<T> = std::result::Result<T, IpcError>;

pub fn providers(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<ProviderDto>> {
    Ok(ctx.providers()?.list()?.into_iter().map(ProviderDto::from).collect())
}

pub fn add_provider(ctx: &AppContext, args: AddProviderArgs) -> Result<ProviderDto> {
    Ok(ctx.providers()?.add(args.into())?.into())
}

pub fn update_provider(ctx: &AppContext, args: UpdateProviderArgs) -> Result<ProviderDto> {
    let (id, confirmed) = (args.id.clone(), args.confirm_host_change.unwrap_or(false));
    Ok(ctx.providers()?.update(&id, args.into(), confirmed)?.into())
}

pub fn delete_provider(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedProviderDto> {
    let deleted_keys = ctx.providers()?.delete(&id)?;
    Ok(DeletedProviderDto { id, deleted_keys })
}

pub fn api_keys(ctx: &AppContext, args: ProviderArgs) -> Result<Vec<ApiKeyDto>> {
    Ok(ctx.keys()?.list(&args.provider_id)?.into_iter().map(ApiKeyDto::from).collect())
}

pub fn add_api_key(ctx: &AppContext, args: AddApiKeyArgs) -> Result<ApiKeyDto> {
    Ok(ctx.keys()?.add(args.into())?.into())
}

pub fn update_api_key(ctx: &AppContext, args: UpdateApiKeyArgs) -> Result<ApiKeyDto> {
    let id = args.id.clone();
    Ok(ctx.keys()?.update(&id, args.into())?.into())
}

pub fn set_key_limits(ctx: &AppContext, args: SetKeyLimitsArgs) -> Result<ApiKeyDto> {
    Ok(ctx.keys()?.set_limits(&args.id, (&args).into())?.into())
}

pub fn delete_api_key(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedDto> {
    ctx.keys()?.delete(&id)?;
    Ok(DeletedDto { id })
}

pub fn toggle_api_key(ctx: &AppContext, args: ToggleApiKeyArgs) -> Result<ApiKeyDto> {
    Ok(ctx.keys()?.set_enabled(&args.id, args.enabled)?.into())
}

pub fn reorder_api_keys(ctx: &AppContext, args: ReorderApiKeysArgs) -> Result<Vec<ApiKeyDto>> {
    Ok(ctx.keys()?.reorder(&args.provider_id, &args.ids)?.into_iter().map(ApiKeyDto::from).collect())
}

pub fn pool_status(ctx: &AppContext, ProviderArgs { provider_id }: ProviderArgs) -> Result<PoolStatusDto> {
    let view = ctx.keys()?.pool_status(&provider_id)?;
    Ok(PoolStatusDto::new(provider_id, view))
}

pub fn reset_cooldown(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedDto> {
    ctx.keys()?.reset_cooldown(&id)?;
    Ok(DeletedDto { id })
}

pub async fn test_api_key(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<KeyTestResult> {
    Ok(ctx.keys()?.test(&id).await?.into())
}

pub async fn list_models(ctx: &AppContext, args: ListModelsArgs) -> Result<ModelListDto> {
    Ok(ctx.providers()?.models(&args.provider_id, args.refresh.unwrap_or(false)).await?.into())
}
