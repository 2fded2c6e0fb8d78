import { fromJson } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TableSettingsSchema } from '../gen/pulka/lobby/v1/settings_pb';
import { defaultSettings } from '../screens/CreateTable';
import { settingsJson, settingsOf } from './view';

describe('settingsJson and settingsOf: what the create dialog sends is what a description reads', () => {
  it('keeps every setting the dialog offers, the bots\' level included', () => {
    for (const botLevel of ['easy', 'normal', 'strong'] as const) {
      const s = { ...defaultSettings(), botLevel, moveTime: 30 };
      const back = settingsOf(fromJson(TableSettingsSchema, settingsJson(s)));
      // A classic table has no Japanese target.
      expect(back).toEqual({ ...s, japaneseTarget: 0 });
    }
  });

  it('reads a table made before levels as saying nothing of its bots', () => {
    expect(settingsOf(fromJson(TableSettingsSchema, { game: 'GAME_CLASSIC' })).botLevel).toBeNull();
  });
});
