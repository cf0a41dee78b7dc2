import { useEffect, useState } from 'react';
import { appApi } from '../../../ipc/app';

/**
 * Whether this machine has a keychain to keep the team secret in: true or false once the backend
 * has said, null until then (or when it cannot say). Without one the secret lives only until
 * Keypool closes, which the Team page says before the user connects, not after.
 */
export function useKeychainKept(): boolean | null {
  const [kept, setKept] = useState<boolean | null>(null);
  useEffect(() => {
    let live = true;
    appApi.getStatus().then(
      (status) => live && setKept(status.keychain ? status.keychain.state === 'available' : null),
      () => live && setKept(null),
    );
    return () => {
      live = false;
    };
  }, []);
  return kept;
}
