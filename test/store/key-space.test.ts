/**
 * Issue #18, "One key space": the KeySpace a process builds at boot makes every key under its prefix,
 * with the names of the key families (src/store/keys.ts) unchanged.
 */
import { expect } from 'chai';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

describe('key space', () => {
  const keySpace = new KeySpace('p');

  it('makes game keys under {g:<gameId>}, workspace keys under {w:<workspaceId>}, the rest under the prefix', () => {
    expect(keySpace.game('G1').base).to.equal('p:{g:G1}');
    expect(keySpace.game('G1').eventStream()).to.equal('p:{g:G1}:events');
    expect(keySpace.game('G1').roster('s1')).to.equal('p:{g:G1}:roster:s1');
    expect(keySpace.workspace('W1').banList()).to.equal('p:{w:W1}:bans');
    expect(keySpace.global.activeGames()).to.equal('p:active-games');
    expect(keySpace.global.authChannel()).to.equal('p:auth-invalidate');
    expect(keySpace.global.consoleSession('abc')).to.equal('p:console-session:abc');
    expect(keySpace.global.oidcLogin('st')).to.equal('p:oidc-login:st');
    expect(keySpace.global.bullPrefix()).to.equal('p:bull');
  });

  it('keeps SCAN patterns inside the prefix', () => {
    expect(keySpace.scanPattern()).to.equal('p:*');
    expect(keySpace.scanPattern('*G1*')).to.equal('p:*G1*');
  });
});
